package pool_test

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/pool"
)

// RecycleWorkers and MaxTasksPerWorker retire processes side by side,
// each start racing the other's, under load: no call fails, and once the
// pool is shut down no process is left. Not parallel: it counts the test
// process's children.
func TestRecycleWorkersWithMaxTasksPerWorker(t *testing.T) {
	kids := countChildren(t)
	const workers = 2
	p, l := eventPool(t, pool.Options{Workers: workers, MinWorkers: workers, MaxQueue: 8,
		Subprocess: pool.SubprocessOptions{MaxTasksPerWorker: 3}})
	ctx := testCtx(t)
	holdEveryWorker(t, p, l, t.TempDir(), "up", workers)

	var stop atomic.Bool
	var load sync.WaitGroup
	for range workers {
		load.Go(func() {
			for !stop.Load() {
				_, err := pool.Run(ctx, p, add, [2]int{1, 2})
				assert.NoError(t, err)
			}
		})
	}
	for range 3 {
		require.NoError(t, p.RecycleWorkers(ctx))
	}
	stop.Store(true)
	load.Wait()
	assert.GreaterOrEqual(t, p.Stats().Recycled, uint64(3*workers))
	require.NoError(t, p.Shutdown(ctx))
	require.Eventually(t, func() bool { return countChildren(t) == kids },
		20*time.Second, time.Millisecond, "a worker process outlived its pool")
}

// A worker that leaves while RecycleWorkers waits for it has nothing left
// to replace; a pool that closes ends the wait with ErrClosed. Neither
// leaves a process behind (goleak checks the goroutines).
func TestRecycleWorkersWhilePoolChanges(t *testing.T) {
	t.Run("fewer workers", func(t *testing.T) {
		const workers = 2
		p, l := eventPool(t, pool.Options{Workers: workers, MinWorkers: workers})
		ctx := testCtx(t)
		dir := t.TempDir()
		old := holdEveryWorker(t, p, l, dir, "before", workers)
		long := onWorker1(t, p, l, dir)
		recycled := make(chan error, 1)
		go func() { recycled <- p.RecycleWorkers(ctx) }()
		assert.Equal(t, 2, l.wait(t, pool.WorkerRecycled).Worker)
		require.NoError(t, p.SetWorkers(1)) // worker 2, idle, exits with its new process
		require.Eventually(t, func() bool { return p.Stats().Workers == 1 }, 20*time.Second, time.Millisecond)
		pid, err := long()
		require.NoError(t, err)
		assert.Contains(t, old, pid)
		require.NoError(t, <-recycled)
		for pid := range holdEveryWorker(t, p, l, dir, "after", 1) {
			assert.NotContains(t, old, pid)
		}
	})
	t.Run("close", func(t *testing.T) {
		const workers = 2
		p, l := eventPool(t, pool.Options{Workers: workers, MinWorkers: workers})
		ctx := testCtx(t)
		dir := t.TempDir()
		holdEveryWorker(t, p, l, dir, "before", workers)
		long := onWorker1(t, p, l, dir)
		recycled := make(chan error, 1)
		go func() { recycled <- p.RecycleWorkers(ctx) }()
		l.wait(t, pool.WorkerRecycled)
		require.NoError(t, p.Close())
		require.ErrorIs(t, <-recycled, pool.ErrClosed)
		_, err := long()
		require.ErrorIs(t, err, pool.ErrClosed)
	})
}
