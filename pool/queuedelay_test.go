package pool_test

import (
	"context"
	"math"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/pool"
)

// In a standing queue, tasks that waited past Target are failed with an
// error matching ErrQueueFull and never run; the worker goes on with newer
// ones. The QueueDelay tests run in a synctest bubble: the waits they
// stage are exact, however busy the machine.
func TestQueueDelayDropsOverdueTasksOfAStandingQueue(t *testing.T) {
	t.Parallel()
	synctest.Test(t, testQueueDelayDropsOverdueTasksOfAStandingQueue)
}

func testQueueDelayDropsOverdueTasksOfAStandingQueue(t *testing.T) {
	p := newPool(t, pool.Options{Workers: 1, MaxQueue: 10,
		QueueDelay: pool.QueueDelay{Target: 5 * time.Millisecond, Interval: 30 * time.Millisecond}})
	started, free := occupyWorker(t, p)
	old := submitEach(t, context.Background(), p, gates(1, 3, started, openGate, false))
	time.Sleep(60 * time.Millisecond) // the queue stands for two intervals
	free()
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
	synctest.Test(t, testQueueDelayKeepsABurst)
}

func testQueueDelayKeepsABurst(t *testing.T) {
	p := newPool(t, pool.Options{Workers: 1, MaxQueue: 10,
		QueueDelay: pool.QueueDelay{Target: time.Millisecond, Interval: 50 * time.Millisecond}})
	var futures []*pool.Future[int]
	for i := range 10 {
		f, err := pool.Submit(context.Background(), p, nap, 2*time.Millisecond)
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
	for _, qd := range []pool.QueueDelay{
		{Target: time.Second}, {Interval: time.Second}, {Target: 2 * time.Second, Interval: time.Second}, {Target: -1, Interval: time.Second},
		{TargetDrainTimes: 1}, {IntervalDrainTimes: 1}, {TargetDrainTimes: 2, IntervalDrainTimes: 1}, {TargetDrainTimes: -1, IntervalDrainTimes: 1},
		{TargetDrainTimes: math.NaN(), IntervalDrainTimes: 1}, {TargetDrainTimes: 1, IntervalDrainTimes: math.Inf(1)},
	} {
		_, err := pool.New(pool.Options{QueueDelay: qd})
		require.Error(t, err, "%+v", qd)
		assert.Contains(t, err.Error(), "QueueDelay")
	}
	for _, qd := range []pool.QueueDelay{
		pool.DefaultQueueDelay(), {Target: time.Millisecond, Interval: time.Second},
		{TargetDrainTimes: 1, IntervalDrainTimes: 4}, {Target: time.Millisecond, IntervalDrainTimes: 4}, {TargetDrainTimes: 1, Interval: time.Second},
	} {
		p, err := pool.New(pool.Options{QueueDelay: qd})
		require.NoError(t, err, "%+v", qd)
		require.NoError(t, p.Close())
	}
}

// A queue that stood empty for longer than Interval (the worker idle) is
// not standing the moment a task queues behind a running one: that task
// may wait up to Interval, not Target.
func TestQueueDelayIdleQueueIsNotStanding(t *testing.T) {
	t.Parallel()
	synctest.Test(t, testQueueDelayIdleQueueIsNotStanding)
}

func testQueueDelayIdleQueueIsNotStanding(t *testing.T) {
	p := newPool(t, pool.Options{Workers: 1, MinWorkers: 1, MaxQueue: 10,
		QueueDelay: pool.QueueDelay{Target: time.Millisecond, Interval: time.Second}})
	time.Sleep(1200 * time.Millisecond) // the queue has been empty for over an Interval
	_, free := occupyWorker(t, p)
	queued, err := pool.Submit(context.Background(), p, wait, gate{id: 1, release: openGate})
	require.NoError(t, err)
	time.Sleep(999 * time.Millisecond) // past Target, within Interval
	free()
	out, err := queued.Wait()
	require.NoError(t, err, "a task queued behind one running task, in a queue empty until then, runs")
	assert.Equal(t, 1, out)
}

// TargetDrainTimes and IntervalDrainTimes scale the limits with the pool's run time:
// after a 10 ms task, 50 runs is 500 ms, so a 60 ms wait (far past the
// fixed 1 ms/2 ms) in a queue standing for 60 ms is fine.
func TestQueueDelayScalesWithRunTime(t *testing.T) {
	t.Parallel()
	synctest.Test(t, testQueueDelayScalesWithRunTime)
}

func testQueueDelayScalesWithRunTime(t *testing.T) {
	p := newPool(t, pool.Options{Workers: 1, MaxQueue: 10,
		QueueDelay: pool.QueueDelay{Target: time.Millisecond, Interval: 2 * time.Millisecond, TargetDrainTimes: 50, IntervalDrainTimes: 100}})
	_, err := pool.Run(context.Background(), p, nap, 10*time.Millisecond)
	require.NoError(t, err)
	require.Equal(t, 10*time.Millisecond, p.Load().RecentRunTime, "the bubble's clock times the run exactly")

	_, free := occupyWorker(t, p)
	var queued []*pool.Future[int]
	for i := 1; i <= 3; i++ {
		f, err := pool.Submit(context.Background(), p, wait, gate{id: i, release: openGate})
		require.NoError(t, err)
		queued = append(queued, f)
	}
	time.Sleep(60 * time.Millisecond)
	free()
	for i, f := range queued {
		out, err := f.Wait()
		require.NoError(t, err, "task %d waited within the scaled target", i+1)
		assert.Equal(t, i+1, out)
	}
	assert.Zero(t, p.Stats().Canceled)
}

// openGate lets a gate task through at once.
var openGate = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// occupyWorker starts a gate task that holds p's one worker until free is
// called; free lets it finish and checks it returned cleanly. started gets
// the id of each gate task that starts with it (the holder's is read here).
func occupyWorker(t *testing.T, p *pool.Pool) (started chan int, free func()) {
	t.Helper()
	release := make(chan struct{})
	started = make(chan int, 10)
	holder, err := pool.Submit(context.Background(), p, wait, gate{id: 0, started: started, release: release})
	require.NoError(t, err)
	require.Equal(t, 0, <-started)
	return started, func() {
		t.Helper()
		close(release)
		_, err := holder.Wait()
		require.NoError(t, err)
	}
}

// DefaultQueueDelay hands each caller its own copy: what one caller does
// to it reaches no other pool.
func TestDefaultQueueDelayIsNotShared(t *testing.T) {
	qd := pool.DefaultQueueDelay()
	qd.Target = time.Hour
	assert.Equal(t, 5*time.Millisecond, pool.DefaultQueueDelay().Target)
}
