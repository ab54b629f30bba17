package pool_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/pool"
)

// The (Workers+MaxQueue+1)-th concurrent submission fails at once with
// ErrQueueFull, whatever the queue setting and whether or not the ctx can
// be cancelled, and the rejected task never runs. In a synctest bubble,
// "at once" is exact: no time passes, and a rejection that blocked would
// deadlock the bubble.
func TestQueueFullAtCapacity(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		opts     pool.Options
		capacity int
	}{
		{"auto", pool.Options{Workers: 2}, 2 + 4},
		{"auto-3", pool.Options{Workers: 3}, 3 + 9},
		{"explicit", pool.Options{Workers: 2, MaxQueue: 5}, 2 + 5},
		{"no-queue", pool.Options{Workers: 2, MaxQueue: pool.NoQueue}, 2},
		{"min-workers-warm", pool.Options{Workers: 2, MinWorkers: 2, MaxQueue: 1}, 3},
	}
	for _, tc := range cases {
		for _, cancellable := range []bool{false, true} {
			name := tc.name
			if cancellable {
				name += "/cancellable-ctx"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				synctest.Test(t, func(t *testing.T) {
					ctx := callerCtx(t, cancellable)
					// Submit straight after New: most workers have not started
					// yet, and admission must count the tasks all the same.
					p := newPool(t, tc.opts)
					release := make(chan struct{})
					futures := submitEach(t, ctx, p, gates(0, tc.capacity, nil, release, false))
					ran := make(chan int, 1)
					start := time.Now()
					_, err := pool.Submit(ctx, p, wait, gate{id: -1, started: ran, release: release})
					require.ErrorIs(t, err, pool.ErrQueueFull)
					_, err = pool.Run(ctx, p, wait, gate{id: -2, started: ran, release: release})
					require.ErrorIs(t, err, pool.ErrQueueFull)
					assert.Zero(t, time.Since(start), "rejection must not block")

					st := p.Stats()
					assert.Equal(t, uint64(tc.capacity), st.Submitted)
					assert.Equal(t, uint64(2), st.Rejected)
					assert.Equal(t, tc.capacity, st.Busy+st.Queued)

					close(release)
					requireIDs(t, futures, 0)
					select {
					case id := <-ran:
						t.Fatalf("rejected task %d ran", id)
					default:
					}
				})
			})
		}
	}
}

func TestUnboundedNeverRejects(t *testing.T) {
	t.Parallel()
	p := newPool(t, pool.Options{Workers: 1, MaxQueue: pool.Unbounded})
	release := make(chan struct{})
	futures := submitEach(t, context.Background(), p, gates(0, 5000, nil, release, false))
	st := p.Stats()
	assert.Equal(t, 5000, st.Queued+st.Busy)
	close(release)
	requireIDs(t, futures, 0)
}

func TestQueueIsFIFO(t *testing.T) {
	t.Parallel()
	p := newPool(t, pool.Options{Workers: 1, MaxQueue: 50})
	first := make(chan struct{})
	started := make(chan int, 1)
	blocker, err := pool.Submit(context.Background(), p, wait, gate{id: -1, started: started, release: first})
	require.NoError(t, err)
	require.Equal(t, -1, <-started)

	order := make(chan int, 50)
	open := make(chan struct{})
	close(open)
	futures := submitEach(t, context.Background(), p, gates(0, 50, order, open, false))
	close(first)
	_, err = blocker.Wait()
	require.NoError(t, err)
	requireIDs(t, futures, 0)
	close(order)
	want := 0
	for got := range order {
		require.Equal(t, want, got, "tasks must start in submission order")
		want++
	}
	require.Equal(t, 50, want)
}

// A queued task whose ctx ends leaves the queue: its caller gets the ctx
// error, it never runs, and its slot takes the very next submission.
func TestCancelQueuedFreesSlot(t *testing.T) {
	t.Parallel()
	for _, via := range []string{"Submit", "Run"} {
		t.Run(via, func(t *testing.T) {
			t.Parallel()
			p := newPool(t, pool.Options{Workers: 1, MaxQueue: 2})
			release := make(chan struct{})
			started := make(chan int, 10)
			running, err := pool.Submit(context.Background(), p, wait, gate{id: 0, started: started, release: release})
			require.NoError(t, err)
			require.Equal(t, 0, <-started)
			queued, err := pool.Submit(context.Background(), p, wait, gate{id: 1, started: started, release: release})
			require.NoError(t, err)

			ctx, cancel := context.WithCancel(context.Background())
			var victimErr error
			done := make(chan struct{})
			if via == "Submit" {
				f, err := pool.Submit(ctx, p, wait, gate{id: 2, started: started, release: release})
				require.NoError(t, err)
				go func() { defer close(done); _, victimErr = f.Wait() }()
			} else {
				go func() {
					defer close(done)
					_, victimErr = pool.Run(ctx, p, wait, gate{id: 2, started: started, release: release})
				}()
				require.Eventually(t, func() bool { return p.Stats().Queued == 2 }, 5*time.Second, time.Millisecond)
			}
			_, err = pool.Submit(context.Background(), p, add, [2]int{})
			require.ErrorIs(t, err, pool.ErrQueueFull, "the pool is full before the cancel")

			cancel()
			<-done
			require.ErrorIs(t, victimErr, context.Canceled)
			assert.Equal(t, 1, p.Stats().Queued)
			next, err := pool.Submit(context.Background(), p, add, [2]int{20, 3})
			require.NoError(t, err, "the cancelled task's slot must be free")

			close(release)
			for _, f := range []*pool.Future[int]{running, queued} {
				_, err := f.Wait()
				require.NoError(t, err)
			}
			out, err := next.Wait()
			require.NoError(t, err)
			assert.Equal(t, 23, out)
			close(started)
			for id := range started {
				assert.NotEqual(t, 2, id, "the cancelled task must never run")
			}
			assert.Equal(t, uint64(1), p.Stats().Canceled)
		})
	}
}

func TestSubmitWithDoneCtxIsRejected(t *testing.T) {
	t.Parallel()
	p := newPool(t, pool.Options{Workers: 1})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := pool.Submit(ctx, p, add, [2]int{})
	require.ErrorIs(t, err, context.Canceled)
	_, err = pool.Run(ctx, p, add, [2]int{})
	require.ErrorIs(t, err, context.Canceled)
	st := p.Stats()
	assert.Equal(t, uint64(0), st.Submitted)
	assert.Equal(t, uint64(2), st.Rejected)
}

func TestUnknownTask(t *testing.T) {
	t.Parallel()
	p := newPool(t, pool.Options{Workers: 1})
	var never pool.Task[int, int]
	_, err := pool.Run(context.Background(), p, never, 1)
	require.ErrorIs(t, err, pool.ErrUnknownTask)
	_, err = pool.Submit(context.Background(), p, never, 1)
	require.ErrorIs(t, err, pool.ErrUnknownTask)
}

func TestSubmitBlockingWaitsForRoom(t *testing.T) {
	t.Parallel()
	p := newPool(t, pool.Options{Workers: 1, MaxQueue: pool.NoQueue})
	release := make(chan struct{})
	started := make(chan int, 10)
	first, err := pool.Submit(context.Background(), p, wait, gate{id: 0, started: started, release: release})
	require.NoError(t, err)

	require.Equal(t, 0, <-started)

	// Two blocked producers get room in arrival order.
	futures := make(chan *pool.Future[int], 2)
	for i := 1; i <= 2; i++ {
		go func() {
			f, err := pool.SubmitBlocking(context.Background(), p, wait, gate{id: i, started: started, release: release})
			assert.NoError(t, err)
			futures <- f
		}()
		require.Eventually(t, func() bool { return waitersOf(p) == i }, 5*time.Second, time.Millisecond)
	}

	// A blocked producer whose ctx ends gets its error and no slot.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err = pool.SubmitBlocking(ctx, p, add, [2]int{})
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Equal(t, 2, waitersOf(p))

	close(release)
	_, err = first.Wait()
	require.NoError(t, err)
	for range 2 {
		f := <-futures
		require.NotNil(t, f)
		_, err := f.Wait()
		require.NoError(t, err)
	}
	assert.Equal(t, 1, <-started, "the first blocked producer runs first")
	assert.Equal(t, 2, <-started)
}

// waitersOf counts blocked SubmitBlocking callers.
func waitersOf(p *pool.Pool) int { return pool.WaitersForTest(p) }

func TestSubmitBlockingFailsOnClose(t *testing.T) {
	t.Parallel()
	p := newPool(t, pool.Options{Workers: 1, MaxQueue: pool.NoQueue})
	release := make(chan struct{})
	defer close(release)
	_, err := pool.Submit(context.Background(), p, wait, gate{release: release, honorCtx: true})
	require.NoError(t, err)
	errc := make(chan error, 1)
	go func() {
		_, err := pool.SubmitBlocking(context.Background(), p, add, [2]int{})
		errc <- err
	}()
	require.Eventually(t, func() bool { return waitersOf(p) == 1 }, 5*time.Second, time.Millisecond)
	require.NoError(t, p.Close())
	require.ErrorIs(t, <-errc, pool.ErrClosed)
}

// A caller that waits for each task before submitting the next is never
// rejected by its own previous task, even with no queue at all.
func TestSequentialCallerIsNeverRejected(t *testing.T) {
	t.Parallel()
	p := newPool(t, pool.Options{Workers: 1, MaxQueue: pool.NoQueue})
	for i := range 2000 {
		out, err := pool.Run(context.Background(), p, add, [2]int{i, 1})
		require.NoError(t, err, "call %d", i)
		require.Equal(t, i+1, out)
	}
	assert.Equal(t, uint64(0), p.Stats().Rejected)
}

// callerCtx is a caller's ctx: context.Background(), or, if cancellable,
// one that can be cancelled (and is, when the test ends). Run and Submit
// take a different path for a ctx that can end.
func callerCtx(t *testing.T, cancellable bool) context.Context {
	if !cancellable {
		return context.Background()
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	return ctx
}
