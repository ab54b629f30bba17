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
	runs := make([]atomic.Int32, submitters*each)
	var live, peak atomic.Int32
	outcomes := make([]outcome, submitters*each)
	var resolved atomic.Int64
	var resizes sync.WaitGroup
	var resizeCalls int
	resizes.Go(func() {
		r := rand.New(rand.NewPCG(7, 7))
		for ; resolved.Load() < submitters*each*2/3; resizeCalls++ {
			time.Sleep(time.Duration(r.IntN(400)) * time.Microsecond) // jitter, not a wait
			assert.NoError(t, p.SetWorkers(1+r.IntN(most)))
			_ = p.Stats() // reads every worker under the lock, meanwhile
		}
		assert.NoError(t, p.SetWorkers(last)) // the load goes on a while
	})
	var wg sync.WaitGroup
	for s := range submitters {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(s), 11))
			for k := range each {
				id := s*each + k
				in := counted{runs: &runs, live: &live, peak: &peak, id: id, sleep: time.Duration(r.IntN(200)) * time.Microsecond}
				ctx, cancel := context.Background(), context.CancelFunc(func() {})
				if r.IntN(4) == 0 {
					ctx, cancel = context.WithTimeout(ctx, time.Duration(r.IntN(300))*time.Microsecond)
				}
				outcomes[id] = submitAny(t, r, ctx, p, countedTask, in)
				cancel()
				resolved.Add(1)
			}
		})
	}
	wg.Wait()
	resizes.Wait()

	completed := checkRuns(t, outcomes, runs)
	for id, o := range outcomes {
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
