package pool_test

import (
	"context"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/pool"
)

// SetWorkers called again and again while submitters of every kind come
// and go, some cancelling, keeps every promise of the pool: no task runs
// twice or after it was refused, every accepted one ends once, the counts
// add up, no more tasks run at once than the most Workers ever set, and
// the pool ends with no more workers than it was last told, set while the
// load still ran (idle workers never time out here: only SetWorkers and
// the workers' own check make them leave). The safety net for a queue
// that takes the lock off the handoff: workers parking and resuming while
// SetWorkers dismisses and spawns.
func TestSetWorkersUnderLoadKeepsEveryPromise(t *testing.T) {
	t.Parallel()
	const submitters, each, most = 12, 120, 6
	const last = 2
	p := newPool(t, pool.Options{Workers: 3, MinWorkers: 1, MaxQueue: 8, IdleTimeout: time.Hour})
	var live, peak atomic.Int32
	work := startLoad(t, p, submitters, each, 11, func(r *rand.Rand, in counted) (counted, context.Context, context.CancelFunc) {
		in.live, in.peak, in.sleep = &live, &peak, time.Duration(r.IntN(200))*time.Microsecond
		if r.IntN(4) == 0 {
			ctx, cancel := context.WithTimeout(context.Background(), time.Duration(r.IntN(300))*time.Microsecond)
			return in, ctx, cancel
		}
		return in, context.Background(), func() {}
	})
	var resizes sync.WaitGroup
	var resizeCalls int
	resizes.Go(func() {
		r := rand.New(rand.NewPCG(7, 7))
		for ; work.resolved.Load() < submitters*each*2/3; resizeCalls++ {
			time.Sleep(time.Duration(r.IntN(400)) * time.Microsecond) // jitter, not a wait
			assert.NoError(t, p.SetWorkers(1+r.IntN(most)))
			_ = p.Stats() // reads every worker under the lock, meanwhile
		}
		assert.NoError(t, p.SetWorkers(last)) // the load goes on a while
	})
	completed := work.wait(t)
	resizes.Wait()
	for id, o := range work.outcomes {
		if o.err != nil && !o.rejected {
			require.ErrorIs(t, o.err, context.DeadlineExceeded, "task %d: the only failure here is a deadline", id)
		}
	}
	assert.LessOrEqual(t, peak.Load(), int32(most), "no more tasks at once than the most Workers set")

	assert.Eventually(t, func() bool {
		st := p.Stats()
		return st.Busy == 0 && st.Queued == 0 && st.Workers <= last
	}, 10*time.Second, time.Millisecond, "workers above the last Workers leave")
	st := p.Stats() // settled: no load is left
	l := p.Load()   // and its lock-free mirrors, published under the lock Stats took
	assert.Equal(t, [4]int{st.Workers, last, 0, 0}, [4]int{l.Workers, l.MaxWorkers, l.Busy, l.InFlight}, "%+v", l)
	assert.LessOrEqual(t, st.Workers, last)
	checkCounts(t, st, completed, submitters*each)
	assert.Equal(t, last, p.Options().Workers)
	assert.Positive(t, st.Canceled, "the test exercised cancellation")
	assert.GreaterOrEqual(t, resizeCalls, 10, "the test exercised SetWorkers")
}
