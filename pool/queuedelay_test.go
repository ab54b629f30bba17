package pool_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/pool"
)

// In a standing queue, tasks that waited past Target are failed with an
// error matching ErrQueueFull and never run; the worker goes on with newer
// ones.
func TestQueueDelayDropsOverdueTasksOfAStandingQueue(t *testing.T) {
	t.Parallel()
	p := newPool(t, pool.Options{Workers: 1, MaxQueue: 10,
		QueueDelay: pool.QueueDelay{Target: 5 * time.Millisecond, Interval: 30 * time.Millisecond}})
	release := make(chan struct{})
	started := make(chan int, 10)
	blocker, err := pool.Submit(context.Background(), p, wait, gate{id: 0, started: started, release: release})
	require.NoError(t, err)
	require.Equal(t, 0, <-started)
	open := make(chan struct{})
	close(open)
	var old []*pool.Future[int]
	for i := 1; i <= 3; i++ {
		f, err := pool.Submit(context.Background(), p, wait, gate{id: i, started: started, release: open})
		require.NoError(t, err)
		old = append(old, f)
	}
	time.Sleep(60 * time.Millisecond) // the queue stands for two intervals
	close(release)
	_, err = blocker.Wait()
	require.NoError(t, err)
	for _, f := range old {
		_, err := f.Wait()
		require.ErrorIs(t, err, pool.ErrQueueFull)
		assert.Contains(t, err.Error(), "waited")
	}
	out, err := pool.Run(context.Background(), p, add, [2]int{1, 2})
	require.NoError(t, err, "a fresh task runs")
	assert.Equal(t, 3, out)
	close(started)
	for id := range started {
		assert.Equal(t, 0, id, "no overdue task ran")
	}
	assert.Equal(t, uint64(3), p.Stats().Canceled)
}

// A burst into a queue that drains within Interval is served in full.
func TestQueueDelayKeepsABurst(t *testing.T) {
	t.Parallel()
	p := newPool(t, pool.Options{Workers: 1, MaxQueue: 10,
		QueueDelay: pool.QueueDelay{Target: time.Millisecond, Interval: 5 * time.Second}})
	var futures []*pool.Future[int]
	for i := range 10 {
		f, err := pool.Submit(context.Background(), p, spin, 2*time.Millisecond)
		require.NoError(t, err, "submission %d", i)
		futures = append(futures, f)
	}
	for _, f := range futures {
		_, err := f.Wait()
		require.NoError(t, err, "waits under Interval in a draining queue are fine")
	}
}

func TestQueueDelayValidation(t *testing.T) {
	t.Parallel()
	for _, qd := range []pool.QueueDelay{{Target: time.Second}, {Interval: time.Second}, {Target: 2 * time.Second, Interval: time.Second}, {Target: -1, Interval: time.Second}} {
		_, err := pool.New(pool.Options{QueueDelay: qd})
		require.Error(t, err, "%+v", qd)
		assert.Contains(t, err.Error(), "QueueDelay")
	}
	p, err := pool.New(pool.Options{QueueDelay: pool.DefaultQueueDelay})
	require.NoError(t, err)
	require.NoError(t, p.Close())
}
