package pool_test

import (
	"context"
	"errors"
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
func TestEveryBatchedTaskResolvesExactlyOnce(t *testing.T) {
	t.Parallel()
	const submitters, batches, maxBatch = 8, 60, 8
	p, err := pool.New(pool.Options{Workers: 3, MaxQueue: 24, IdleTimeout: 5 * time.Millisecond})
	require.NoError(t, err)
	runs := make([]atomic.Int32, submitters*batches*maxBatch)

	type outcome struct {
		out      int
		err      error
		rejected bool
		used     bool
	}
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

	var tasks, completed, rejected, full int
	for id, o := range outcomes {
		n := runs[id].Load()
		require.LessOrEqual(t, n, int32(1), "task %d ran %d times", id, n)
		if !o.used {
			require.Zero(t, n)
			continue
		}
		tasks++
		switch {
		case o.err == nil:
			completed++
			require.Equal(t, id, o.out)
			require.Equal(t, int32(1), n, "a result comes from a run")
		case o.rejected:
			rejected++
			require.Equal(t, int32(0), n, "task %d of a refused batch ran (%v)", id, o.err)
			if errors.Is(o.err, pool.ErrQueueFull) {
				full++
			}
		}
	}
	st := p.Stats()
	checkCounts(t, st, completed, tasks)
	assert.Equal(t, uint64(rejected), st.Rejected)
	assert.Equal(t, 0, st.Workers)
	assert.Greater(t, full, 0, "the test exercised refusals for room")
	assert.Greater(t, st.Canceled, uint64(0), "the test exercised cancellation")
	assert.Greater(t, st.Failed, uint64(0), "the test exercised panics: %+v, completed %d rejected %d full %d", st, completed, rejected, full)
}
