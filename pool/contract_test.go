package pool_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/internal/testkit"
	"github.com/offloadgo/offload/pool"
)

var (
	// goexit ends its goroutine with runtime.Goexit, as t.FailNow in a
	// helper does, instead of returning.
	goexit = pool.Register("test.goexit", func(context.Context, int) (int, error) {
		runtime.Goexit()
		return 0, nil
	})
	// panicWith panics with the value its input names.
	panicWith = pool.Register("test.panic-with", func(_ context.Context, what string) (int, error) {
		switch what {
		case "sentinel":
			panic(errSentinel)
		case "wrapped":
			panic(fmt.Errorf("wrapped: %w", errSentinel))
		case "string":
			panic("a string")
		case "int":
			panic(42)
		case "map":
			panic(map[string]int{"a": 1})
		case "func":
			panic(func() {})
		}
		return 0, nil
	})
	// causeOf reports the cause of its ctx's end, on stdout (for a
	// Subprocess pool, whose caller has gone by then) and as its error.
	causeOf = pool.Register("test.cause-of", func(ctx context.Context, tag string) (int, error) {
		fmt.Printf("cause-of %s started\n", tag)
		<-ctx.Done()
		cause := context.Cause(ctx)
		fmt.Printf("cause-of %s: closed=%t cause=%v\n", tag, errors.Is(cause, pool.ErrClosed), cause)
		return 0, cause
	})
)

var errSentinel = errors.New("the sentinel")

// A task that calls runtime.Goexit fails its caller with ErrGoexit and
// frees its worker: the pool serves the next task and shuts down.
func TestGoexitFailsTheTaskOnly(t *testing.T) {
	t.Parallel()
	eachIsolation(t, func(t *testing.T, iso pool.Isolation) {
		p := newIsolatedPool(t, iso, pool.Options{Workers: 1, MinWorkers: 1})
		ctx := testCtx(t)
		for range 3 {
			testkit.Within(t, 20*time.Second, "Run of a task that calls Goexit", func() {
				_, err := pool.Run(ctx, p, goexit, 1)
				require.ErrorIs(t, err, pool.ErrGoexit)
				assert.Contains(t, err.Error(), "test.goexit")
			})
			out, err := pool.Run(ctx, p, add, [2]int{1, 2})
			require.NoError(t, err, "the pool serves the next task")
			assert.Equal(t, 3, out)
		}
		st := p.Stats()
		assert.Zero(t, st.Busy, "%+v", st)
		assert.EqualValues(t, 3, st.Failed, "%+v", st)
		assert.EqualValues(t, 3, st.Completed, "%+v", st)
		assert.Equal(t, 1, st.Workers, "MinWorkers is kept: %+v", st)
		testkit.Within(t, 20*time.Second, "Shutdown", func() {
			require.NoError(t, p.Shutdown(ctx))
		})
	})
}

// A panic's value reaches the caller as closely as the isolation allows:
// the value itself in process; across processes a string stays a string,
// an error keeps its message (and Unwrap still finds an error), other
// values arrive as msgpack decodes them, and what can't be encoded as its
// text.
func TestPanicValueAcrossIsolations(t *testing.T) {
	t.Parallel()
	eachIsolation(t, func(t *testing.T, iso pool.Isolation) {
		p := newIsolatedPool(t, iso, pool.Options{Workers: 1})
		ctx := testCtx(t)
		panicOf := func(what string) *pool.PanicError {
			t.Helper()
			_, err := pool.Run(ctx, p, panicWith, what)
			var pe *pool.PanicError
			require.ErrorAs(t, err, &pe, what)
			assert.Equal(t, "test.panic-with", pe.Task)
			assert.Contains(t, string(pe.Stack), "goroutine")
			return pe
		}

		for _, what := range []string{"sentinel", "wrapped"} {
			pe := panicOf(what)
			inner := errors.Unwrap(pe)
			require.Error(t, inner, "Unwrap finds the panic's error (%s)", what)
			assert.Equal(t, fmt.Sprint(map[string]error{"sentinel": errSentinel, "wrapped": fmt.Errorf("wrapped: %w", errSentinel)}[what]), inner.Error())
			if iso == pool.InProcess {
				assert.ErrorIs(t, pe, errSentinel, "in process, errors.Is sees the panic's error")
			} else {
				var remote *pool.RemoteError
				assert.ErrorAs(t, pe, &remote, "across processes, the error is a RemoteError")
			}
		}
		assert.Equal(t, "a string", panicOf("string").Value)
		if iso == pool.InProcess {
			assert.Equal(t, 42, panicOf("int").Value)
			assert.Equal(t, map[string]int{"a": 1}, panicOf("map").Value)
		} else {
			assert.Equal(t, int64(42), panicOf("int").Value)
			assert.Equal(t, map[string]any{"a": int64(1)}, panicOf("map").Value)
			assert.Contains(t, panicOf("func").Value, "0x", "a func crosses as its text")
		}
	})
}

// Close's cause reaches the task's ctx in every case: the caller's ctx can
// end, carries values but can't end, or is Background.
func TestCloseCauseReachesTheTask(t *testing.T) {
	t.Parallel()
	type key struct{}
	ctxs := map[string]func() (context.Context, context.CancelFunc){
		"background": func() (context.Context, context.CancelFunc) { return context.Background(), func() {} },
		"values": func() (context.Context, context.CancelFunc) {
			return context.WithValue(context.Background(), key{}, 1), func() {}
		},
		"cancellable": func() (context.Context, context.CancelFunc) {
			return context.WithCancel(context.Background())
		},
	}
	for _, iso := range isolations {
		for name, mk := range ctxs {
			t.Run(iso.String()+"/"+name, func(t *testing.T) {
				t.Parallel()
				opts := pool.Options{Workers: 1}
				var p *pool.Pool
				var log *logCapture
				if iso == pool.Subprocess {
					opts.Subprocess.TerminateGrace = 10 * time.Second
					p, log = newProcPool(t, opts)
				} else {
					p = newPool(t, opts)
				}
				ctx, cancel := mk()
				defer cancel()
				f, err := pool.Submit(ctx, p, causeOf, name)
				require.NoError(t, err)
				if iso == pool.Subprocess {
					log.waitLog(t, "cause-of "+name+" started")
				} else {
					waitBusy(t, p, 1)
				}
				require.NoError(t, p.Close())
				_, err = f.Wait()
				require.ErrorIs(t, err, pool.ErrClosed)
				if iso == pool.Subprocess {
					log.waitLog(t, "cause-of "+name+": closed=true")
				} else {
					require.Eventually(t, func() bool { return p.Stats().Busy == 0 }, 5*time.Second, time.Millisecond)
				}
			})
		}
	}
}

// The InProcess half of TestCloseCauseReachesTheTask, seen by the task
// itself rather than through its caller, who has its ErrClosed at once.
func TestCloseCauseInProcess(t *testing.T) {
	t.Parallel()
	type key struct{}
	p := newPool(t, pool.Options{Workers: 1})
	seen := make(chan error, 1)
	started := make(chan struct{})
	f, err := pool.Submit(context.WithValue(context.Background(), key{}, 1), p, reportCause, causeReport{started, seen})
	require.NoError(t, err)
	<-started
	require.NoError(t, p.Close())
	_, err = f.Wait()
	require.ErrorIs(t, err, pool.ErrClosed)
	require.ErrorIs(t, <-seen, pool.ErrClosed, "the task's context.Cause is the pool's")
}

type causeReport struct {
	started chan<- struct{}
	seen    chan<- error
}

var reportCause = pool.Register("test.report-cause", func(ctx context.Context, r causeReport) (int, error) {
	close(r.started)
	<-ctx.Done()
	r.seen <- context.Cause(ctx)
	return 0, nil
})

// waitGone waits until process pid has exited (a zombie, or reaped).
func waitGone(t *testing.T, pid int) {
	t.Helper()
	require.Eventually(t, func() bool { return testkit.ProcessExited(pid) }, 20*time.Second, 100*time.Microsecond,
		"process %d never exited", pid)
}
