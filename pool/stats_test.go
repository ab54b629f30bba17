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
)

func TestStatsLatencyAndUtilization(t *testing.T) {
	t.Parallel()
	p := newPool(t, pool.Options{Workers: 1, MinWorkers: 1})
	const runs, d = 20, 5 * time.Millisecond
	for range runs {
		_, err := pool.Run(context.Background(), p, spin, d)
		require.NoError(t, err)
	}
	st := p.Stats()
	assert.Equal(t, uint64(runs), st.Submitted)
	assert.Equal(t, uint64(runs), st.Completed)
	assert.Equal(t, uint64(runs), st.RunTime.Count)
	assert.GreaterOrEqual(t, st.RunTime.P50, d)
	assert.GreaterOrEqual(t, st.RunTime.Max, st.RunTime.P99)
	assert.GreaterOrEqual(t, st.RunTime.P99, st.RunTime.P50)
	assert.Less(t, st.WaitTime.P50, st.RunTime.P50, "an idle worker picks a task up at once")
	assert.Greater(t, st.Utilization, 0.0)
	assert.LessOrEqual(t, st.Utilization, 1.0)
	assert.GreaterOrEqual(t, p.Load().RecentRunTime, d/2)
}

// The wait is the bubble's clock: the second task waits exactly as long as
// the first holds the worker.
func TestStatsShowsQueueWait(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		p := newPool(t, pool.Options{Workers: 1, MaxQueue: 1})
		release := make(chan struct{})
		first, err := pool.Submit(context.Background(), p, wait, gate{release: release})
		require.NoError(t, err)
		second, err := pool.Submit(context.Background(), p, add, [2]int{})
		require.NoError(t, err)
		time.Sleep(30 * time.Millisecond)
		close(release)
		for _, f := range []*pool.Future[int]{first, second} {
			_, err := f.Wait()
			require.NoError(t, err)
		}
		assert.GreaterOrEqual(t, p.Stats().WaitTime.Max, 20*time.Millisecond, "the second task waited for the first")
	})
}

func TestLoadMirrorsThePool(t *testing.T) {
	t.Parallel()
	p, err := pool.New(pool.Options{Workers: 1, MaxQueue: 2})
	require.NoError(t, err)
	release := make(chan struct{})
	started := make(chan int, 3)
	submitted := time.Now()
	futures := submitEach(t, context.Background(), p, gates(0, 3, started, release, false))
	<-started
	l := p.Load()
	assert.Positive(t, l.RecentRunTime, "before a task ends, how long the first has run")
	assert.LessOrEqual(t, l.RecentRunTime, time.Since(submitted))
	l.RecentRunTime = 0
	assert.Equal(t, pool.Load{Workers: 1, MaxWorkers: 1, Busy: 1, Queued: 2, InFlight: 3, Capacity: 3}, l)
	close(release)
	requireIDs(t, futures, 0)
	require.NoError(t, p.Shutdown(context.Background()))
	l = p.Load()
	assert.True(t, l.Closed)
	assert.Equal(t, 0, l.InFlight)
	assert.Equal(t, 0, l.Workers)
	assert.Greater(t, l.RecentRunTime, time.Duration(0))
}

// Stats.Tasks breaks the tasks that ran down by name, by what their
// caller got.
func TestStatsByTask(t *testing.T) {
	t.Parallel()
	p := newPool(t, pool.Options{Workers: 2})
	ctx := context.Background()
	for i := range 5 {
		_, err := pool.Run(ctx, p, add, [2]int{i, i})
		require.NoError(t, err)
	}
	for range 2 {
		_, err := pool.Run(ctx, p, fail, "no")
		require.Error(t, err)
	}
	c, cancelRun := context.WithCancel(ctx)
	f, err := pool.Submit(c, p, honorCtx, 1)
	require.NoError(t, err)
	waitBusy(t, p, 1)
	cancelRun()
	_, err = f.Wait()
	require.ErrorIs(t, err, context.Canceled)
	require.Eventually(t, func() bool {
		st := p.Stats()
		return st.Tasks["test.honor-ctx"].Canceled == 1 && st.Tasks["test.add"].Completed == 5 && st.Tasks["test.fail"].Failed == 2
	}, 5*time.Second, time.Millisecond, "%+v", p.Stats().Tasks)
	st := p.Stats()
	assert.Len(t, st.Tasks, 3)
	assert.Zero(t, st.Tasks["test.add"].Failed)
	assert.Positive(t, st.Tasks["test.add"].RunTime)
	assert.Equal(t, st.RunTime.Count, uint64(8))
}

// A worker turning from task to task charges each run to its name, and a
// worker that exits leaves its counts behind: per name, the counts only
// grow while the tasks run (a Prometheus counter must never go down), and
// in the end they add up to the pool's totals.
func TestStatsByTaskAcrossTurnsAndExits(t *testing.T) {
	t.Parallel()
	p := newPool(t, pool.Options{Workers: 2, IdleTimeout: 20 * time.Millisecond})
	ctx := context.Background()
	stop := make(chan struct{})
	watched := make(chan error, 1)
	go func() {
		last := map[string]pool.TaskStats{}
		for {
			for name, s := range p.Stats().Tasks {
				l := last[name]
				if s.Completed < l.Completed || s.Failed < l.Failed || s.RunTime < l.RunTime {
					watched <- fmt.Errorf("%s went back from %+v to %+v", name, l, s)
					return
				}
				last[name] = s
			}
			select {
			case <-stop:
				watched <- nil
				return
			default:
			}
		}
	}()
	var added, failed int
	for round := range 6 {
		for i := range 50 {
			if (i+round)%3 == 0 {
				_, err := pool.Run(ctx, p, fail, "no")
				require.Error(t, err)
				failed++
			} else {
				_, err := pool.Run(ctx, p, add, [2]int{i, round})
				require.NoError(t, err)
				added++
			}
		}
		if round%2 == 1 {
			require.Eventually(t, func() bool { return p.Stats().Workers == 0 }, 5*time.Second, time.Millisecond)
		}
	}
	close(stop)
	require.NoError(t, <-watched)
	require.Eventually(t, func() bool {
		st := p.Stats()
		return st.Tasks["test.add"].Completed == uint64(added) && st.Tasks["test.fail"].Failed == uint64(failed)
	}, 5*time.Second, time.Millisecond, "%+v", p.Stats().Tasks)
	st := p.Stats()
	assert.Zero(t, st.Tasks["test.add"].Failed)
	assert.Zero(t, st.Tasks["test.fail"].Completed)
	assert.Equal(t, st.RunTime.Sum, st.Tasks["test.add"].RunTime+st.Tasks["test.fail"].RunTime)
}

// OldestRunning is the age of the longest-running task, and 0 when none
// runs: a task stuck on a ctx it ignores shows there. (In a synctest
// bubble, its age is exact.)
func TestStatsOldestRunning(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		p := newPool(t, pool.Options{Workers: 2})
		assert.Zero(t, p.Stats().OldestRunning)
		free1 := occupy(t, p)
		time.Sleep(3 * time.Second)
		free2 := occupy(t, p)
		time.Sleep(2 * time.Second)
		assert.Equal(t, 5*time.Second, p.Stats().OldestRunning, "the first task's age, not the second's")
		free1()
		assert.Equal(t, 2*time.Second, p.Stats().OldestRunning, "now the second's")
		free2()
		assert.Zero(t, p.Stats().OldestRunning)
	})
}

// occupy holds one of p's workers with a task until free is called.
func occupy(t *testing.T, p *pool.Pool) (free func()) {
	t.Helper()
	release := make(chan struct{})
	started := make(chan int, 1)
	f, err := pool.Submit(context.Background(), p, wait, gate{started: started, release: release})
	require.NoError(t, err)
	<-started
	return func() {
		close(release)
		_, err := f.Wait()
		require.NoError(t, err)
		synctest.Wait() // the worker has finished the task
	}
}
