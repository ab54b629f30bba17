package pool_test

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/pool"
)

// slowEvents collects a pool's WorkerSlowTask events.
type slowEvents struct {
	mu     sync.Mutex
	events []pool.WorkerEvent
}

func (s *slowEvents) add(ev pool.WorkerEvent) {
	if ev.Kind != pool.WorkerSlowTask {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.events = append(s.events, ev)
}

func (s *slowEvents) got() []pool.WorkerEvent {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]pool.WorkerEvent(nil), s.events...)
}

// A task that runs past SlowTaskAfter is reported once, as it passes it:
// a WorkerSlowTask event with its name, how long it has run and its
// worker, logged at Warn and counted in Stats.Slow. Tasks that end
// before it are not. (In a synctest bubble the times are exact.)
func TestSlowTaskIsReportedOnceAsItPassesTheThreshold(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var slow slowEvents
		var logs logCapture
		p := newPool(t, pool.Options{Workers: 2, SlowTaskAfter: time.Second, OnWorkerEvent: slow.add,
			Logger: slog.New(slog.NewTextHandler(&logs, nil))})

		for range 3 {
			_, err := pool.Run(context.Background(), p, nap, 900*time.Millisecond)
			require.NoError(t, err)
		}
		assert.Empty(t, slow.got(), "tasks that end before the threshold")

		f, err := pool.Submit(context.Background(), p, nap, 5*time.Second)
		require.NoError(t, err)
		time.Sleep(time.Second - time.Nanosecond)
		synctest.Wait()
		assert.Empty(t, slow.got(), "not yet past the threshold")
		assert.Zero(t, p.Stats().Slow)

		time.Sleep(time.Nanosecond)
		synctest.Wait()
		got := slow.got()
		require.Len(t, got, 1, "reported as it passes the threshold")
		assert.Equal(t, "test.nap", got[0].Task)
		assert.Equal(t, time.Second, got[0].Running)
		assert.Positive(t, got[0].Worker)
		assert.Zero(t, got[0].PID, "in process")
		assert.Equal(t, uint64(1), p.Stats().Slow)
		assert.Contains(t, logs.String(), "level=WARN")
		assert.Contains(t, logs.String(), "task=test.nap")
		assert.Contains(t, logs.String(), "running=1s")

		_, err = f.Wait()
		require.NoError(t, err)
		assert.Len(t, slow.got(), 1, "once, however long it runs")
		assert.Equal(t, uint64(1), p.Stats().Slow)
	})
}

// watchedPool is a quiet pool of workers that reports the tasks running
// past a second to the events it returns.
func watchedPool(t *testing.T, workers int) (*pool.Pool, *slowEvents) {
	t.Helper()
	slow := &slowEvents{}
	return newPool(t, pool.Options{Workers: workers, SlowTaskAfter: time.Second, OnWorkerEvent: slow.add, Logger: quietLogger}), slow
}

// Each slow task is reported, and only the slow ones, however many run
// at once and whenever they started.
func TestSlowTasksAreReportedEachOnce(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		p, slow := watchedPool(t, 3)
		ctx := context.Background()
		long1, err := pool.Submit(ctx, p, nap, 3*time.Second)
		require.NoError(t, err)
		time.Sleep(500 * time.Millisecond)
		long2, err := pool.Submit(ctx, p, nap, 2*time.Second)
		require.NoError(t, err)
		short, err := pool.Submit(ctx, p, nap, 800*time.Millisecond)
		require.NoError(t, err)
		for _, f := range []*pool.Future[int]{long1, long2, short} {
			_, err := f.Wait()
			require.NoError(t, err)
		}
		got := slow.got()
		require.Len(t, got, 2)
		assert.NotEqual(t, got[0].Worker, got[1].Worker, "two tasks, on two workers")
		for _, ev := range got {
			assert.Less(t, ev.Running, 1250*time.Millisecond, "within a quarter of the threshold past it")
			assert.GreaterOrEqual(t, ev.Running, time.Second)
		}
		assert.Equal(t, uint64(2), p.Stats().Slow)
	})
}

// The watcher runs only while tasks run: an idle pool keeps no goroutine
// and no timer for it, and it starts again with the next task.
func TestSlowTaskWatcherStopsWhenIdle(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		p, slow := watchedPool(t, 1)
		assert.False(t, pool.WatchingSlowForTest(p), "no task has run")
		_, err := pool.Run(context.Background(), p, nap, 2*time.Second)
		require.NoError(t, err)
		time.Sleep(time.Second)
		synctest.Wait()
		assert.False(t, pool.WatchingSlowForTest(p), "stopped once nothing ran")

		_, err = pool.Run(context.Background(), p, nap, 2*time.Second)
		require.NoError(t, err)
		assert.Len(t, slow.got(), 2, "and started again for the next task")
	})
}

// The event reaches the hook outside the pool's lock: a hook that reads
// Stats (which takes the lock) does not deadlock.
func TestSlowTaskHookMayCallThePool(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var p *pool.Pool
		busy := make(chan int, 1)
		p = newPool(t, pool.Options{Workers: 1, SlowTaskAfter: time.Second, Logger: quietLogger,
			OnWorkerEvent: func(ev pool.WorkerEvent) {
				if ev.Kind == pool.WorkerSlowTask {
					busy <- p.Stats().Busy
				}
			}})
		_, err := pool.Run(context.Background(), p, nap, 2*time.Second)
		require.NoError(t, err)
		assert.Equal(t, 1, <-busy)
	})
}

// A Subprocess pool's slow task names the worker process that runs it.
func TestSlowTaskNamesItsWorkerProcess(t *testing.T) {
	t.Parallel()
	var slow slowEvents
	p := newPool(t, pool.Options{Workers: 1, Isolation: pool.Subprocess, SlowTaskAfter: 20 * time.Millisecond,
		OnWorkerEvent: slow.add, Logger: quietLogger})
	pid, err := pool.Run(context.Background(), p, workerPID, 0)
	require.NoError(t, err)

	ctx, cancel := context.WithCancel(context.Background())
	f, err := pool.Submit(ctx, p, nap, time.Hour)
	require.NoError(t, err)
	// (The first task may be reported too, on a busy machine, with its
	// process's start: it counts as running, as in Stats.)
	var ev pool.WorkerEvent
	require.Eventually(t, func() bool {
		for _, e := range slow.got() {
			if e.Task == "test.nap" {
				ev = e
				return true
			}
		}
		return false
	}, 20*time.Second, time.Millisecond)
	assert.Equal(t, pid, ev.PID, "the process the task runs in")
	assert.GreaterOrEqual(t, ev.Running, 20*time.Millisecond)
	assert.EqualValues(t, len(slow.got()), p.Stats().Slow)
	cancel()
	_, err = f.Wait()
	require.ErrorIs(t, err, context.Canceled)
}

// SlowTaskAfter must not be negative.
func TestSlowTaskAfterNegativeIsAnError(t *testing.T) {
	t.Parallel()
	_, err := pool.New(pool.Options{SlowTaskAfter: -time.Second})
	require.Error(t, err)
	assert.True(t, strings.Contains(err.Error(), "SlowTaskAfter"), err.Error())
}

// quietLogger drops the pool's records.
var quietLogger = slog.New(slog.DiscardHandler)
