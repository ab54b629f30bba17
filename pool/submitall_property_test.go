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

// Every task of every batch resolves exactly once — a result, an error or
// a refusal of its whole batch — under concurrent submitters of batches of
// random sizes, random cancels and deadlines and a shutdown midway; no task
// runs twice, no task of a refused batch runs, and the counters add up.
// One panic is planned (see plannedPanic), and one in twenty of the
// random tasks panic.
func TestEveryBatchedTaskResolvesExactlyOnce(t *testing.T) {
	t.Parallel()
	const submitters, batches, maxBatch = 8, 60, 8
	p, err := pool.New(pool.Options{Workers: 3, MaxQueue: 24, IdleTimeout: 5 * time.Millisecond})
	require.NoError(t, err)
	plannedPanic(t, p)
	runs := make([]atomic.Int32, submitters*batches*maxBatch)

	outcomes := make([]outcome, len(runs))
	var resolved atomic.Int64
	var wg sync.WaitGroup
	for s := range submitters {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(s), 23))
			for b := range batches {
				first := (s*batches + b) * maxBatch
				ins := make([]counted, 1+r.IntN(maxBatch))
				for i := range ins {
					ins[i] = counted{runs: &runs, id: first + i, sleep: time.Duration(r.IntN(300)) * time.Microsecond, panic: r.IntN(20) == 0}
				}
				ctx, cancel := randomEnd(r)
				futures, err := pool.SubmitAll(ctx, p, countedTask, ins)
				for i := range ins {
					o := outcome{used: true}
					if err != nil {
						o.err, o.rejected = err, true
					} else {
						o.out, o.err = futures[i].Wait()
						again, againErr := futures[i].Wait()
						assert.Equal(t, o.out, again, "Wait is stable")
						assert.Equal(t, o.err, againErr, "Wait is stable")
					}
					outcomes[first+i] = o
				}
				cancel()
				resolved.Add(1)
			}
		})
	}
	require.Eventually(t, func() bool { return resolved.Load() > submitters*batches/2 }, 30*time.Second, time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Millisecond)
	shutdownErr := p.Shutdown(ctx)
	cancel()
	wg.Wait()
	require.NoError(t, p.Shutdown(context.Background()))
	if shutdownErr != nil {
		require.ErrorIs(t, shutdownErr, context.DeadlineExceeded)
	}

	got := checkRuns(t, outcomes, runs)
	st := p.Stats()
	checkCounts(t, st, got.completed, got.used+1)
	assert.Equal(t, uint64(got.rejected), st.Rejected)
	assert.Equal(t, 0, st.Workers)
	assert.Greater(t, got.full, 0, "the test exercised refusals for room")
	assert.Greater(t, st.Canceled, uint64(0), "the test exercised cancellation")
	assert.Greater(t, st.Failed, uint64(0), "the test exercised panics: %+v, outcomes %+v", st, got)
}
