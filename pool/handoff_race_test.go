package pool_test

import (
	"context"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/offloadgo/offload/pool"
)

// A caller's ctx that ends while its task is handed to an idle worker —
// after admission gave the task to the worker and before the worker starts
// it, when the task is neither queued nor running — resolves the task
// exactly once: the caller gets the result or the ctx error, the task runs
// at most once, every worker comes back, and the counters and the
// lock-free Load add up. Every worker is idle whenever a caller submits,
// so nearly every task goes through a handoff; each ctx is cancelled from
// another goroutine a random few hundred nanoseconds to microseconds after
// the submission starts, so that the cancels land all over that window.
func TestCancelRacingHandoff(t *testing.T) {
	t.Parallel()
	const callers, each = 8, 400
	p := newPool(t, pool.Options{Workers: callers, MinWorkers: callers, MaxQueue: pool.Unbounded})
	work := startLoad(t, p, callers, each, 7, func(r *rand.Rand, in counted) (counted, context.Context, context.CancelFunc) {
		ctx, cancel := context.WithCancel(context.Background())
		fired := make(chan struct{})
		go func(spins int) {
			defer close(fired)
			busyWait(spins)
			cancel()
		}(r.IntN(4000))
		return in, ctx, func() { <-fired }
	})
	completed := work.wait(t)
	// A caller that gave up on a running task returns before the task
	// ends: wait for the workers to finish what they were handed.
	assert.Eventually(t, func() bool { return p.Stats().Busy == 0 }, 10*time.Second, time.Millisecond)
	st := p.Stats()
	checkCounts(t, st, completed, callers*each)
	assert.Equal(t, callers, st.Workers, "no worker lost")
	l := p.Load()
	assert.Equal(t, [3]int{callers, 0, 0}, [3]int{l.Workers, l.Busy, l.InFlight}, "%+v", l)
	assert.Positive(t, st.Canceled, "the test exercised cancellation")
	assert.Positive(t, st.Completed, "the test let tasks finish")
}

// busyWait spins about n short steps: a finer delay than a timer gives.
func busyWait(n int) {
	var x atomic.Int64
	for range n {
		x.Add(1)
	}
}
