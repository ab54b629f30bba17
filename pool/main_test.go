package pool_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/offloadgo/offload/internal/testkit"
	"github.com/offloadgo/offload/pool"
)

func TestMain(m *testing.M) {
	testkit.RunMemoryHog() // the child process of memlimit_test.go's task
	runProgramHost()       // the pool's process of extern_parentdeath_test.go
	// The test binary is also the Subprocess tests' worker, which gives
	// tasks the trace context their calls carry (tracer_test.go).
	pool.Main(pool.MainOptions{Tracer: &fakeTracer{}})
	goleak.VerifyTestMain(m)
}

// gate is a task input that blocks until its channel closes (or, with
// honorCtx, until the task's ctx ends), recording that it started.
type gate struct {
	started  chan<- int
	release  <-chan struct{}
	id       int
	honorCtx bool
}

var (
	add = pool.Register("test.add", func(_ context.Context, in [2]int) (int, error) {
		return in[0] + in[1], nil
	})
	wait = pool.Register("test.wait", func(ctx context.Context, g gate) (int, error) {
		if g.started != nil {
			g.started <- g.id
		}
		if g.honorCtx {
			select {
			case <-g.release:
			case <-ctx.Done():
				return 0, context.Cause(ctx)
			}
		} else {
			<-g.release
		}
		return g.id, nil
	})
	fail = pool.Register("test.fail", func(_ context.Context, msg string) (struct{}, error) {
		return struct{}{}, errors.New(msg)
	})
	boom = pool.Register("test.panic", func(_ context.Context, v any) (int, error) {
		panic(v)
	})
	spin = pool.Register("test.spin", func(_ context.Context, d time.Duration) (int, error) {
		for end := time.Now().Add(d); time.Now().Before(end); {
		}
		return 1, nil
	})
)

func newPool(t *testing.T, o pool.Options) *pool.Pool {
	t.Helper()
	if o.Isolation == pool.Subprocess {
		requireSubprocess(t)
	}
	p, err := pool.New(o)
	testkit.SkipUnsupported(t, err) // a MemoryLimit off Linux
	if err != nil {
		t.Fatalf("New(%+v): %v", o, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := p.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown in cleanup: %v", err)
		}
	})
	return p
}

// requireSubprocess skips t on a platform where New refuses Isolation
// Subprocess, with New's own error as the reason.
func requireSubprocess(t *testing.T) {
	t.Helper()
	if err := pool.SubprocessSupportedForTest(); err != nil {
		t.Skip(err.Error())
	}
}
