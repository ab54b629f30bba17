package pool_test

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/pool"
	"github.com/offloadgo/offload/transfer"
)

// A batch is admitted whole or not at all: one task more than the room
// left is refused at once with ErrQueueFull saying how many fit, and then
// nothing of it was admitted (Submitted, Busy and Queued don't move) and
// nothing of it runs; a batch that fits exactly is admitted.
func TestSubmitAllIsAllOrNothing(t *testing.T) {
	t.Parallel()
	for _, cancellable := range []bool{false, true} {
		t.Run(fmt.Sprintf("cancellable=%v", cancellable), func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				ctx := callerCtx(t, cancellable)
				p := newPool(t, pool.Options{Workers: 2, MaxQueue: 3}) // room for 5
				started := make(chan int, 100)
				release := make(chan struct{})
				held, err := pool.Submit(ctx, p, wait, gate{id: 0, started: started, release: release})
				require.NoError(t, err)

				start := time.Now()
				futures, err := pool.SubmitAll(ctx, p, wait, gates(100, 5, started, release, false))
				require.ErrorIs(t, err, pool.ErrQueueFull)
				assert.Contains(t, err.Error(), "a batch of 5 tasks, room for 4")
				assert.Nil(t, futures)
				assert.Zero(t, time.Since(start), "a refusal must not block")
				synctest.Wait()
				st := p.Stats()
				assert.Equal(t, uint64(1), st.Submitted, "a refused batch admits nothing")
				assert.Equal(t, uint64(5), st.Rejected, "each of its tasks counts as refused")
				assert.Equal(t, 1, st.Busy+st.Queued)

				futures, err = pool.SubmitAll(ctx, p, wait, gates(1, 4, started, release, false))
				require.NoError(t, err, "a batch that fits exactly")
				require.Len(t, futures, 4)
				assert.Equal(t, uint64(5), p.Stats().Submitted)
				close(release)
				_, err = held.Wait()
				require.NoError(t, err)
				requireIDs(t, futures, 1)
				close(started)
				for id := range started {
					assert.Less(t, id, 100, "a task of the refused batch ran")
				}
			})
		})
	}
}

// SubmitAll returns the Futures in input order, each with its own input's
// result, and a pool of one worker starts the tasks in that order (FIFO).
func TestSubmitAllKeepsInputOrder(t *testing.T) {
	t.Parallel()
	// With workers to start, and with idle ones the batch's first tasks
	// go to straight away, the rest queued behind them.
	for _, minWorkers := range []int{0, 4} {
		t.Run(fmt.Sprintf("results/min-workers=%d", minWorkers), func(t *testing.T) {
			t.Parallel()
			p := newPool(t, pool.Options{Workers: 4, MinWorkers: minWorkers, MaxQueue: pool.Unbounded})
			require.Eventually(t, func() bool { return p.Stats().Workers == minWorkers }, 10*time.Second, time.Millisecond)
			ins := make([][2]int, 500)
			for i := range ins {
				ins[i] = [2]int{i, i}
			}
			for range 3 {
				futures, err := pool.SubmitAll(testCtx(t), p, add, ins)
				require.NoError(t, err)
				require.Len(t, futures, len(ins))
				for i, f := range futures {
					out, err := f.Wait()
					require.NoError(t, err)
					require.Equal(t, 2*i, out, "future %d", i)
				}
			}
			st := p.Stats()
			assert.Equal(t, uint64(3*len(ins)), st.Submitted)
			assert.Equal(t, uint64(3*len(ins)), st.Completed)
			assert.Equal(t, 4, st.Workers, "the batch started every worker it could use")
		})
	}
	t.Run("runs", func(t *testing.T) {
		t.Parallel()
		p := newPool(t, pool.Options{Workers: 1, MaxQueue: pool.Unbounded})
		started := make(chan int, 20)
		release := make(chan struct{})
		close(release)
		futures, err := pool.SubmitAll(testCtx(t), p, wait, gates(0, 20, started, release, false))
		require.NoError(t, err)
		for _, f := range futures {
			_, err := f.Wait()
			require.NoError(t, err)
		}
		close(started)
		var order []int
		for id := range started {
			order = append(order, id)
		}
		want := make([]int, 20)
		for i := range want {
			want[i] = i
		}
		assert.Equal(t, want, order)
	})
}

// When the batch's ctx ends, every Future resolves with its error at
// once, even the running task's (which ignores its ctx here and keeps its
// worker); the queued tasks leave the queue at once, never run, and free
// their slots.
func TestSubmitAllCancelResolvesEveryTask(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		p := newPool(t, pool.Options{Workers: 1, MaxQueue: 9}) // room for 10
		ctx, cancel := context.WithCancel(context.Background())
		started := make(chan int, 100)
		release := make(chan struct{})
		futures, err := pool.SubmitAll(ctx, p, wait, gates(0, 10, started, release, false))
		require.NoError(t, err)
		require.Equal(t, 0, <-started)
		synctest.Wait()
		assert.Equal(t, 9, p.Stats().Queued)

		cancel()
		for i, f := range futures {
			_, err := f.Wait()
			require.ErrorIs(t, err, context.Canceled, "future %d", i)
		}
		synctest.Wait()
		st := p.Stats()
		assert.Zero(t, st.Queued, "the queued tasks left the queue")
		assert.Equal(t, 1, st.Busy, "the running task keeps its worker")
		assert.Equal(t, uint64(10), st.Canceled)

		// Every queued task's slot is free again: a batch of 9 fits.
		close(release)
		again, err := pool.SubmitAll(context.Background(), p, add, make([][2]int, 9))
		require.NoError(t, err)
		for _, f := range again {
			_, err := f.Wait()
			require.NoError(t, err)
		}
		assert.Len(t, started, 0, "no queued task ran")
	})
}

// What SubmitAll refuses before admission, and what it does with an empty
// batch: the same checks, never ErrQueueFull, nil and nil.
func TestSubmitAllRefusals(t *testing.T) {
	t.Parallel()
	done, cancel := context.WithCancel(context.Background())
	cancel()
	closed := newPool(t, pool.Options{Workers: 1})
	require.NoError(t, closed.Close())
	full := newPool(t, pool.Options{Workers: 1, MaxQueue: pool.NoQueue})
	release := make(chan struct{})
	defer close(release)
	_, err := pool.Submit(context.Background(), full, wait, gate{release: release})
	require.NoError(t, err)

	for _, n := range []int{0, 3} {
		cases := []struct {
			name string
			ctx  context.Context
			p    *pool.Pool
			task pool.Task[[2]int, int]
			want error
		}{
			{"closed", context.Background(), closed, add, pool.ErrClosed},
			{"unknown task", context.Background(), full, pool.Task[[2]int, int]{}, pool.ErrUnknownTask},
			{"ended ctx", done, full, add, context.Canceled},
			{"nil pool", context.Background(), nil, add, nil},
			{"nil ctx", nil, full, add, nil},
			{"full", context.Background(), full, add, pool.ErrQueueFull},
		}
		for _, tc := range cases {
			t.Run(fmt.Sprintf("%s/n=%d", tc.name, n), func(t *testing.T) {
				futures, err := pool.SubmitAll(tc.ctx, tc.p, tc.task, make([][2]int, n))
				assert.Nil(t, futures)
				switch {
				case n == 0 && tc.want == pool.ErrQueueFull:
					assert.NoError(t, err, "an empty batch always fits")
				case tc.want == nil:
					assert.Error(t, err)
				default:
					assert.ErrorIs(t, err, tc.want)
				}
			})
		}
	}
	st := full.Stats()
	assert.Equal(t, uint64(1), st.Submitted)
	assert.Equal(t, uint64(3*4), st.Rejected, "unknown task, ended ctx, nil ctx and full, 3 tasks each")
}

// An input that can't cross to a worker process fails the whole batch
// with its error and index: nothing of the batch is admitted.
func TestSubmitAllEncodeErrorFailsTheBatch(t *testing.T) {
	t.Parallel()
	requireSubprocess(t)
	p, _ := newProcPool(t, pool.Options{Workers: 2, Subprocess: pool.SubprocessOptions{MaxPayload: 4096}})
	ins := []echoIn{{Name: "a"}, {Name: "b"}, {Name: string(make([]byte, 8192))}}
	futures, err := pool.SubmitAll(testCtx(t), p, procEcho, ins)
	require.ErrorIs(t, err, pool.ErrPayloadTooLarge)
	assert.Contains(t, err.Error(), "input 2")
	assert.Nil(t, futures)
	st := p.Stats()
	assert.Zero(t, st.Submitted)
	assert.Equal(t, uint64(3), st.Rejected)

	futures, err = pool.SubmitAll(testCtx(t), p, procEcho, ins[:2])
	require.NoError(t, err)
	for i, f := range futures {
		out, err := f.Wait()
		require.NoError(t, err)
		assert.Equal(t, ins[i].Name, out.Name)
		assert.Equal(t, 1, out.Count)
	}
}

// On a Subprocess pool a batch runs in the worker processes, results in
// input order.
func TestSubmitAllSubprocess(t *testing.T) {
	t.Parallel()
	p, _ := newProcPool(t, pool.Options{Workers: 2, MaxQueue: 40})
	ins := make([][2]int, 42)
	for i := range ins {
		ins[i] = [2]int{i, 1000}
	}
	futures, err := pool.SubmitAll(testCtx(t), p, add, ins)
	require.NoError(t, err)
	for i, f := range futures {
		out, err := f.Wait()
		require.NoError(t, err)
		assert.Equal(t, i+1000, out)
	}
	_, err = pool.SubmitAll(testCtx(t), p, add, make([][2]int, 43))
	require.ErrorIs(t, err, pool.ErrQueueFull)
}

// A batch's Buffers move only when the batch is admitted, all at once: a
// detached Buffer in one input fails the batch and leaves the other
// inputs' Buffers with the caller.
func TestSubmitAllMovesBuffersAllOrNothing(t *testing.T) {
	t.Parallel()
	p := newPool(t, pool.Options{Workers: 2})
	keep, gone := transfer.Move([]byte("keep")), transfer.Move([]byte("gone"))
	gone.Release()
	_, err := pool.SubmitAll(testCtx(t), p, echoBuffer, []*transfer.Buffer{keep, gone})
	require.ErrorIs(t, err, transfer.ErrDetached)
	assert.False(t, keep.Detached(), "a refused batch leaves its Buffers with the caller")
	assert.Zero(t, p.Stats().Submitted)

	other := transfer.Move([]byte("other"))
	futures, err := pool.SubmitAll(testCtx(t), p, echoBuffer, []*transfer.Buffer{keep, other})
	require.NoError(t, err)
	assert.True(t, keep.Detached(), "an admitted batch moves them")
	assert.True(t, other.Detached())
	for i, want := range []string{"keep", "other"} {
		out, err := futures[i].Wait()
		require.NoError(t, err)
		assert.Equal(t, want, string(out.Bytes()))
		out.Release()
	}
}

// With a Tracer, each task of a batch gets a span, ended with its outcome;
// a refused batch's spans end with the refusal.
func TestSubmitAllTracesEachTask(t *testing.T) {
	t.Parallel()
	tr := &fakeTracer{}
	p := newPool(t, pool.Options{Workers: 1, MaxQueue: 2, Tracer: tr})
	futures, err := pool.SubmitAll(testCtx(t), p, add, make([][2]int, 3))
	require.NoError(t, err)
	for _, f := range futures {
		_, err := f.Wait()
		require.NoError(t, err)
	}
	_, err = pool.SubmitAll(testCtx(t), p, add, make([][2]int, 4))
	require.ErrorIs(t, err, pool.ErrQueueFull)

	tr.mu.Lock()
	spans := append([]*fakeSpan(nil), tr.spans...)
	tr.mu.Unlock()
	require.Len(t, spans, 7)
	for i, s := range spans {
		dequeued, ends := s.state()
		require.Len(t, ends, 1, "span %d ends once", i)
		if i < 3 {
			assert.Equal(t, 1, dequeued)
			assert.NoError(t, ends[0])
		} else {
			assert.Zero(t, dequeued, "a refused task is never dequeued")
			assert.ErrorIs(t, ends[0], pool.ErrQueueFull)
		}
	}
}
