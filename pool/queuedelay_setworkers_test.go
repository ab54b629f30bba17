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

// QueueDelay's scaled limits follow SetWorkers: one task's drain time is
// RecentRunTime ÷ the Workers in force, so fewer workers give a queued
// task longer, and more give it less. Each wait below is allowed under
// the new Workers and would have been refused under the old one (or the
// other way round). In a synctest bubble, for exact waits.
func TestQueueDelayFollowsSetWorkers(t *testing.T) {
	t.Parallel()
	// After a 40 ms task: with 4 workers one task drains in 10 ms
	// (Target 20 ms, Interval 40 ms); with 1, in 40 ms (80 ms, 160 ms).
	qd := pool.QueueDelay{Target: time.Millisecond, Interval: 2 * time.Millisecond, TargetDrainTimes: 2, IntervalDrainTimes: 4}

	t.Run("fewer workers, longer waits", func(t *testing.T) {
		t.Parallel()
		synctest.Test(t, func(t *testing.T) {
			p := napThenSetWorkers(t, qd, 4, 1)
			assert.Equal(t, 2, p.Load().Capacity, "1 worker + an auto MaxQueue of 1²")

			_, free := occupyWorker(t, p)
			queued, err := pool.Submit(context.Background(), p, wait, gate{id: 1, release: openGate})
			require.NoError(t, err)
			_, err = pool.Submit(context.Background(), p, wait, gate{id: 2, release: openGate})
			require.ErrorIs(t, err, pool.ErrQueueFull, "the capacity follows Workers too")
			// 150 ms: under 4 workers' Interval the queue would stand and
			// the task be dropped; under 1 worker's it is a burst.
			time.Sleep(150 * time.Millisecond)
			free()
			out, err := queued.Wait()
			require.NoError(t, err, "within the limits of one worker")
			assert.Equal(t, 1, out)
		})
	})

	t.Run("more workers, shorter waits", func(t *testing.T) {
		t.Parallel()
		synctest.Test(t, func(t *testing.T) {
			p := napThenSetWorkers(t, qd, 1, 4)
			assert.Equal(t, 20, p.Load().Capacity, "4 workers + an auto MaxQueue of 4²")

			var frees []func()
			for range 4 {
				frees = append(frees, occupy(t, p))
			}
			queued, err := pool.Submit(context.Background(), p, wait, gate{id: 1, release: openGate})
			require.NoError(t, err)
			// 60 ms: under 1 worker's limits a burst; under 4 workers'
			// the queue stands (past 40 ms) and the task waited past 20.
			time.Sleep(60 * time.Millisecond)
			frees[0]()
			_, err = queued.Wait()
			require.ErrorIs(t, err, pool.ErrQueueFull, "dropped under the limits of four workers")
			assert.Contains(t, err.Error(), "waited 60ms")
			for _, free := range frees[1:] {
				free()
			}
		})
	})
}

// napThenSetWorkers is a pool of from workers, with qd, that has run one
// 40 ms task, then been set to to workers.
func napThenSetWorkers(t *testing.T, qd pool.QueueDelay, from, to int) *pool.Pool {
	t.Helper()
	p := newPool(t, pool.Options{Workers: from, QueueDelay: qd})
	_, err := pool.Run(context.Background(), p, nap, 40*time.Millisecond)
	require.NoError(t, err)
	require.NoError(t, p.SetWorkers(to))
	return p
}
