package pool_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/internal/seam"
	"github.com/offloadgo/offload/pool"
)

// Cancelling a running task returns its caller at once with the ctx
// error, even when the task ignores its ctx; the worker stays busy, and
// Stats shows it, until the task returns. (In a synctest bubble, "at
// once" is exact: the caller returns as its deadline passes.)
func TestCancelRunningReturnsPromptly(t *testing.T) {
	t.Parallel()
	for _, via := range []string{"Run", "Submit"} {
		t.Run(via, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				p := newPool(t, pool.Options{Workers: 1})
				release := make(chan struct{})
				started := make(chan int, 1)
				ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
				defer cancel()
				begin := time.Now()
				var err error
				if via == "Run" {
					_, err = pool.Run(ctx, p, wait, gate{started: started, release: release})
				} else {
					f, serr := pool.Submit(ctx, p, wait, gate{started: started, release: release})
					require.NoError(t, serr)
					_, err = f.Wait()
				}
				require.ErrorIs(t, err, context.DeadlineExceeded)
				assert.Equal(t, 50*time.Millisecond, time.Since(begin), "the caller returns as its ctx ends")
				<-started

				st := p.Stats()
				assert.Equal(t, 1, st.Busy, "the task still holds its worker")
				assert.Equal(t, uint64(1), st.Canceled)
				_, err = pool.Submit(context.Background(), p, add, [2]int{})
				require.NoError(t, err, "a queue slot is still free")

				close(release)
				require.Eventually(t, func() bool { return p.Stats().Busy == 0 }, 5*time.Second, time.Millisecond)
				st = p.Stats()
				assert.Equal(t, uint64(1), st.Canceled, "the late result is not counted twice")
				assert.Equal(t, uint64(1), st.Completed)
			})
		})
	}
}

func TestRunningTaskSeesCallerCtx(t *testing.T) {
	t.Parallel()
	p := newPool(t, pool.Options{Workers: 1})
	ctx, cancel := context.WithCancel(context.WithValue(context.Background(), ctxKey{}, "v"))
	seen := make(chan error, 1)
	value := make(chan any, 1)
	f, err := pool.Submit(ctx, p, probeCtx, probe{value, seen})
	require.NoError(t, err)
	assert.Equal(t, "v", <-value)
	cancel()
	_, err = f.Wait()
	require.ErrorIs(t, err, context.Canceled)
	require.ErrorIs(t, <-seen, context.Canceled)
}

type (
	ctxKey struct{}
	probe  struct {
		value chan<- any
		err   chan<- error
	}
)

var probeCtx = pool.Register("test.probe-ctx", func(ctx context.Context, in probe) (int, error) {
	in.value <- ctx.Value(ctxKey{})
	<-ctx.Done()
	in.err <- ctx.Err()
	return 0, ctx.Err()
})

func TestPanicBecomesPanicError(t *testing.T) {
	t.Parallel()
	p := newPool(t, pool.Options{Workers: 1})
	sentinel := errors.New("sentinel")
	cases := []struct {
		name  string
		value any
	}{{"string", "kaboom"}, {"error", sentinel}, {"nil-map", nil}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			if tc.value == nil {
				_, err = pool.Run(context.Background(), p, nilMapWrite, 1)
			} else {
				_, err = pool.Run(context.Background(), p, boom, tc.value)
			}
			var pe *pool.PanicError
			require.ErrorAs(t, err, &pe)
			assert.Contains(t, string(pe.Stack), "pool_test", "the stack names the panicking code")
			assert.Contains(t, pe.Error(), "panicked")
			if e, ok := tc.value.(error); ok {
				assert.ErrorIs(t, err, e)
			}
			// The worker survives and serves the next task.
			out, err := pool.Run(context.Background(), p, add, [2]int{2, 2})
			require.NoError(t, err)
			assert.Equal(t, 4, out)
			assert.Equal(t, 1, p.Stats().Workers)
		})
	}
	assert.Equal(t, uint64(3), p.Stats().Failed)
}

var nilMapWrite = pool.Register("test.nil-map", func(_ context.Context, n int) (int, error) {
	var m map[int]int
	//lint:ignore SA5000 the runtime panic this test recovers
	m[n] = n
	return n, nil
})

func TestTaskErrorReachesCaller(t *testing.T) {
	t.Parallel()
	p := newPool(t, pool.Options{Workers: 1})
	_, err := pool.Run(context.Background(), p, fail, "nope")
	require.EqualError(t, err, "nope")
	assert.Equal(t, uint64(1), p.Stats().Failed)
}

func TestRegisterPanicsOnMisuse(t *testing.T) {
	t.Parallel()
	fn := func(context.Context, int) (int, error) { return 0, nil }
	assert.PanicsWithValue(t, `pool: task "test.add" registered twice`, func() { pool.Register("test.add", fn) })
	assert.Panics(t, func() { pool.Register("", fn) })
	assert.Panics(t, func() { pool.Register[int, int]("test.nil-fn", nil) })
	assert.Equal(t, "test.add", add.Name())
}

func TestNewValidatesOptions(t *testing.T) {
	t.Parallel()
	cases := []struct {
		opts pool.Options
		want string
	}{
		{pool.Options{Workers: -1}, "Workers"},
		{pool.Options{Workers: 2, MinWorkers: 3}, "MinWorkers"},
		{pool.Options{MinWorkers: -1}, "MinWorkers"},
		{pool.Options{MaxQueue: -7}, "MaxQueue"},
		{pool.Options{IdleTimeout: -time.Second}, "IdleTimeout"},
		{pool.Options{Isolation: 9}, "Isolation(9)"},
		{pool.Options{Isolation: pool.Subprocess, Subprocess: pool.SubprocessOptions{TerminateGrace: -1}}, "TerminateGrace"},
		{pool.Options{Isolation: pool.Subprocess, Subprocess: pool.SubprocessOptions{MaxTasksPerWorker: -1}}, "MaxTasksPerWorker"},
		{pool.Options{Isolation: pool.Subprocess, Subprocess: pool.SubprocessOptions{MemoryLimit: -1}}, "MemoryLimit"},
		{pool.Options{Isolation: pool.Subprocess, Subprocess: pool.SubprocessOptions{MaxPayload: -1}}, "MaxPayload"},
		{pool.Options{Isolation: pool.Subprocess, Subprocess: pool.SubprocessOptions{MaxPayload: pool.MaxPayloadLimit + 1}}, "MaxPayload"},
		{pool.Options{Isolation: pool.Subprocess, Subprocess: pool.SubprocessOptions{StartTimeout: -1}}, "StartTimeout"},
		{pool.Options{Isolation: pool.Remote}, "Options.Transport"},
		{pool.Options{Transport: refusingTransport{}}, "refuses to bind"}, // a Transport alone means Remote
		{pool.Options{Isolation: pool.Subprocess, Transport: refusingTransport{}}, "Isolation is Subprocess"},
		{pool.Options{Isolation: pool.Remote, Transport: refusingTransport{}}, "refuses to bind"},
		// Settings InProcess would ignore are refused, valid or not.
		{pool.Options{Subprocess: pool.SubprocessOptions{MemoryLimit: -5}}, "Isolation is InProcess"},
		{pool.Options{Subprocess: pool.SubprocessOptions{MaxPayload: 1 << 20}}, "Isolation is InProcess"},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("%+v", tc.opts), func(t *testing.T) {
			p, err := pool.New(tc.opts)
			require.Error(t, err)
			assert.Nil(t, p)
			assert.Contains(t, err.Error(), tc.want)
			assert.Contains(t, err.Error(), "pool: ")
		})
	}
}

func TestDefaults(t *testing.T) {
	t.Parallel()
	p := newPool(t, pool.Options{})
	o := p.Options()
	assert.Equal(t, pool.DefaultWorkers(), o.Workers)
	assert.GreaterOrEqual(t, o.Workers, 1)
	assert.Equal(t, o.Workers*o.Workers, o.MaxQueue)
	assert.Equal(t, pool.DefaultIdleTimeout, o.IdleTimeout)
	assert.Equal(t, pool.InProcess, o.Isolation)
}

// refusingTransport is a Remote transport that can't be bound.
type refusingTransport struct{}

func (refusingTransport) Bind(seam.Env) (seam.Carrier, error) {
	return nil, errors.New("pool: test transport refuses to bind")
}
