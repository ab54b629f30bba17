package pool_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/internal/testkit"
	"github.com/offloadgo/offload/pool"
)

// Both kinds of pool, for tests that must hold for each.
var isolations = []pool.Isolation{pool.InProcess, pool.Subprocess}

// eachIsolation runs test once per kind of pool of isolations, in
// parallel.
func eachIsolation(t *testing.T, test func(t *testing.T, iso pool.Isolation)) {
	for _, iso := range isolations {
		t.Run(iso.String(), func(t *testing.T) {
			t.Parallel()
			test(t, iso)
		})
	}
}

func newIsolatedPool(t *testing.T, iso pool.Isolation, o pool.Options) *pool.Pool {
	t.Helper()
	if iso == pool.Subprocess {
		p, _ := newProcPool(t, o)
		return p
	}
	return newPool(t, o)
}

// A bad ctx from one caller — nil, or one whose methods panic — fails that
// caller alone, before the pool's lock is taken: everyone else's Run,
// Stats, Shutdown go on working.
func TestBadContextLeavesPoolUsable(t *testing.T) {
	t.Parallel()
	eachIsolation(t, func(t *testing.T, iso pool.Isolation) {
		p := newIsolatedPool(t, iso, pool.Options{Workers: 1})

		var nilCtx context.Context // a nil ctx is the point
		var err error
		require.NotPanics(t, func() { _, err = pool.Run(nilCtx, p, add, [2]int{1, 2}) })
		require.Error(t, err, "a nil ctx is refused with an error")
		assert.Contains(t, err.Error(), "nil")
		require.NotPanics(t, func() { _, err = pool.Submit(nilCtx, p, add, [2]int{1, 2}) })
		require.Error(t, err)

		// Each method panics, on a ctx that can be cancelled and on one
		// that only carries values (whose Done is nil): the panic
		// reaches the caller, or the call fails; never a worker.
		for _, method := range testkit.Methods {
			for _, cancellable := range []bool{true, false} {
				ctx, cancel := context.WithCancel(context.Background())
				base := context.WithValue(context.Background(), testkit.PanicCtx{}, 1)
				if cancellable {
					base = ctx
				}
				bad := testkit.PanicCtx{Context: base, Method: method}
				for _, run := range []bool{true, false} {
					func() {
						defer func() { _ = recover() }()
						if run {
							_, _ = pool.Run(bad, p, add, [2]int{1, 2})
							return
						}
						f, err := pool.Submit(bad, p, add, [2]int{1, 2})
						if err == nil {
							_, _ = f.Wait()
						}
					}()
				}
				cancel()
			}
		}

		testkit.Within(t, 20*time.Second, "Run after a bad ctx", func() {
			out, err := pool.Run(testCtx(t), p, add, [2]int{2, 3})
			require.NoError(t, err)
			assert.Equal(t, 5, out)
		})
		testkit.Within(t, 5*time.Second, "Stats after a bad ctx", func() { _ = p.Stats() })
		st := p.Stats()
		assert.Zero(t, st.Busy)
		assert.Zero(t, st.Queued)
	})
}

// The pool can't be used unless New made it, and says so: a zero Pool, a
// nil *Pool and a nil *Future get a clear error, never a panic or a
// misleading ErrQueueFull.
func TestUnusablePoolSaysSo(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for name, p := range map[string]*pool.Pool{"zero": {}, "nil": nil} {
		t.Run(name, func(t *testing.T) {
			_, err := pool.Run(ctx, p, add, [2]int{1, 2})
			require.Error(t, err)
			assert.NotErrorIs(t, err, pool.ErrQueueFull)
			assert.Contains(t, err.Error(), "New")
			_, err = pool.Submit(ctx, p, add, [2]int{1, 2})
			require.Error(t, err)
			_, err = pool.SubmitBlocking(ctx, p, add, [2]int{1, 2})
			require.Error(t, err)
			assert.Zero(t, p.Stats())
			assert.Zero(t, p.Load().Workers)
			assert.Error(t, p.Close())
			assert.Error(t, p.Shutdown(ctx))
		})
	}
	var f *pool.Future[int]
	out, err := f.Wait()
	require.Error(t, err)
	assert.Zero(t, out)
	select {
	case <-f.Done():
	default:
		t.Fatal("a nil Future's Done channel is not closed")
	}
}

// Options that would overflow are saturated, never wrapped: the auto queue
// of a huge Workers, an explicit MaxQueue of math.MaxInt.
func TestOptionsSaturate(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		opts pool.Options
	}{
		{"Workers² overflows", pool.Options{Workers: 3037000500}},
		{"MaxQueue is MaxInt", pool.Options{Workers: 2, MaxQueue: math.MaxInt}},
		{"Workers is MaxInt", pool.Options{Workers: math.MaxInt}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := newPool(t, tc.opts)
			o := p.Options()
			assert.GreaterOrEqual(t, o.MaxQueue, 0, "MaxQueue %d", o.MaxQueue)
			if tc.opts.MaxQueue == 0 && o.Workers < math.MaxInt {
				assert.Greater(t, o.MaxQueue, 0, "the auto queue is not empty")
			}
			l := p.Load()
			assert.Greater(t, l.Capacity, 0, "Capacity %d", l.Capacity)
			assert.GreaterOrEqual(t, l.Capacity, o.Workers)
			out, err := pool.Run(context.Background(), p, add, [2]int{1, 2})
			require.NoError(t, err)
			assert.Equal(t, 3, out)
		})
	}
}

// One event, one counter: a running task whose caller's ctx ends is
// Canceled whichever side resolves it first — the caller's watch, or the
// task returning the ctx error.
func TestCallerCancelCountsAsCanceled(t *testing.T) {
	t.Parallel()
	eachIsolation(t, func(t *testing.T, iso pool.Isolation) {
		opts := pool.Options{Workers: 1}
		if iso == pool.Subprocess {
			opts.Subprocess.TerminateGrace = 5 * time.Second // the task sees the cancel and returns
		}
		p := newIsolatedPool(t, iso, opts)
		const n = 30
		for i := range n {
			ctx, cancel := context.WithCancel(testCtx(t))
			f, err := pool.Submit(ctx, p, honorCtx, i)
			require.NoError(t, err)
			waitBusy(t, p, 1)
			cancel()
			_, err = f.Wait()
			require.ErrorIs(t, err, context.Canceled)
		}
		require.Eventually(t, func() bool { return p.Stats().Busy == 0 }, 10*time.Second, time.Millisecond)
		st := p.Stats()
		assert.EqualValues(t, n, st.Canceled, "%+v", st)
		assert.Zero(t, st.Failed, "%+v", st)
	})
}

// honorCtx waits for its ctx and returns its error.
var honorCtx = pool.Register("test.honor-ctx", func(ctx context.Context, _ int) (int, error) {
	<-ctx.Done()
	return 0, ctx.Err()
})

// waitBusy waits until n workers run a task.
func waitBusy(t *testing.T, p *pool.Pool, n int) {
	t.Helper()
	require.Eventually(t, func() bool { return p.Stats().Busy >= n }, 20*time.Second, 100*time.Microsecond)
}

// ErrTerminated says the task was running in a worker process when its
// caller gave up; Stats.Terminated counts the processes killed for that,
// and only those. A task whose caller gave up while its worker process was
// still starting was never sent: its caller gets the plain ctx error, and
// nothing is terminated. A task that ignores its ctx, without a grace, is
// killed whenever its caller hears ErrTerminated; one that honours its ctx
// within the grace never is. Every other round cancels a task known to be
// running; the others, most often, one whose process is still starting.
func TestTerminatedOnlyWhenKilled(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		grace  time.Duration
		task   pool.Task[graceIn, int]
		killed bool // whether ErrTerminated means a kill
	}{
		{"ignores its ctx", 0, graceIgnore, true},
		{"honours its ctx", longGrace, graceReturn, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p, log := newProcPool(t, pool.Options{Workers: 1, IdleTimeout: time.Millisecond,
				Subprocess: pool.SubprocessOptions{TerminateGrace: tc.grace}})
			terminated := 0
			for i := range 10 {
				before := p.Stats().Terminated
				ctx, cancel := context.WithCancel(testCtx(t))
				tag := fmt.Sprintf("round%d", i)
				f, err := pool.Submit(ctx, p, tc.task, graceIn{Tag: tag})
				require.NoError(t, err)
				if i%2 == 1 {
					log.waitLog(t, "grace "+tag+" started")
				}
				cancel()
				_, err = f.Wait()
				require.ErrorIs(t, err, context.Canceled)
				require.Eventually(t, func() bool { return p.Stats().Busy == 0 }, 20*time.Second, time.Millisecond)
				switch {
				case errors.Is(err, pool.ErrTerminated) && tc.killed:
					terminated++
					assert.Equal(t, before+1, p.Stats().Terminated, "ErrTerminated, but no process was killed")
				case errors.Is(err, pool.ErrTerminated):
					terminated++
					assert.Equal(t, before, p.Stats().Terminated, "the task returned within its grace, but its process was killed")
				default:
					require.Zero(t, i%2, "a running task's caller hears ErrTerminated")
					assert.Equal(t, before, p.Stats().Terminated, "a process was killed, but the caller was not told")
				}
			}
			t.Logf("%d of 10 callers heard ErrTerminated", terminated)
		})
	}
}

// spawnChild starts `sleep 30` from the worker process, reports its pid
// and waits for its ctx: hard terminate and Close must take the child
// down with the worker.
var spawnChild = pool.Register("test.spawn-child", func(ctx context.Context, _ int) (int, error) {
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	fmt.Printf("spawned child pid=%d\n", cmd.Process.Pid)
	<-ctx.Done()
	select {} // ignore the cancel: only the kill ends this
})

// What a task starts dies with its worker process: when the task is
// terminated, and when the pool closes.
func TestTaskChildrenDieWithTheWorker(t *testing.T) {
	t.Parallel()
	for _, how := range []string{"terminate", "close"} {
		t.Run(how, func(t *testing.T) {
			t.Parallel()
			p, log := newProcPool(t, pool.Options{Workers: 1, Subprocess: pool.SubprocessOptions{TerminateGrace: 10 * time.Millisecond}})
			ctx, cancel := context.WithCancel(testCtx(t))
			defer cancel()
			f, err := pool.Submit(ctx, p, spawnChild, 0)
			require.NoError(t, err)
			child := log.waitPID(t, "spawned child pid=")
			if how == "terminate" {
				cancel()
			} else {
				require.NoError(t, p.Close())
			}
			_, err = f.Wait()
			require.ErrorIs(t, err, pool.ErrTerminated)
			waitGone(t, child)
		})
	}
}
