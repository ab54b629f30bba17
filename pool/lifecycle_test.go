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

// Shutdown without a deadline stops intake and lets queued and running
// work finish with its real results.
func TestShutdownDrains(t *testing.T) {
	t.Parallel()
	p, err := pool.New(pool.Options{Workers: 2})
	require.NoError(t, err)
	release := make(chan struct{})
	futures := submitEach(t, context.Background(), p, gates(0, 6, nil, release, false))
	done := make(chan error, 1)
	go func() { done <- p.Shutdown(context.Background()) }()
	require.Eventually(t, func() bool {
		_, err := pool.Submit(context.Background(), p, add, [2]int{})
		return err == pool.ErrClosed
	}, 5*time.Second, time.Millisecond)
	select {
	case err := <-done:
		t.Fatalf("Shutdown returned %v before the work finished", err)
	default:
	}
	close(release)
	require.NoError(t, <-done)
	l := p.Load() // read lock-free, at once: the drained pool published its rest
	assert.Equal(t, pool.Load{Closed: true, RecentRunTime: l.RecentRunTime, Capacity: l.Capacity, MaxWorkers: l.MaxWorkers}, l)
	requireIDs(t, futures, 0)
	st := p.Stats()
	assert.Equal(t, 0, st.Workers, "every worker has exited")
	assert.Equal(t, uint64(6), st.Completed)
	require.NoError(t, p.Shutdown(context.Background()), "Shutdown is idempotent")
	require.NoError(t, p.Close())
}

// When Shutdown's ctx ends, what is left is cancelled: queued tasks get
// ErrClosed, running ones have their ctx cancelled, and Shutdown returns the
// ctx error.
func TestShutdownDeadlineCancelsTheRest(t *testing.T) {
	t.Parallel()
	p, err := pool.New(pool.Options{Workers: 1})
	require.NoError(t, err)
	release := make(chan struct{})
	defer close(release)
	started := make(chan int, 1)
	running, err := pool.Submit(context.Background(), p, wait, gate{id: 0, started: started, release: release, honorCtx: true})
	require.NoError(t, err)
	<-started
	queued, err := pool.Submit(context.Background(), p, wait, gate{id: 1, release: release})
	require.NoError(t, err)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	require.ErrorIs(t, p.Shutdown(ctx), context.DeadlineExceeded)
	_, err = running.Wait()
	require.ErrorIs(t, err, pool.ErrClosed)
	_, err = queued.Wait()
	require.ErrorIs(t, err, pool.ErrClosed)
	// The running task saw its ctx end, returned, and its worker exited.
	require.NoError(t, p.Shutdown(context.Background()))
	assert.Equal(t, 0, p.Stats().Workers)
}

func TestCloseStopsNow(t *testing.T) {
	t.Parallel()
	p, err := pool.New(pool.Options{Workers: 1, MaxQueue: 3})
	require.NoError(t, err)
	release := make(chan struct{})
	started := make(chan int, 1)
	running, err := pool.Submit(context.Background(), p, wait, gate{id: 0, started: started, release: release})
	require.NoError(t, err)
	<-started
	queued := submitEach(t, context.Background(), p, gates(1, 3, nil, release, false))
	runErr := make(chan error, 1)
	go func() {
		_, err := pool.Run(context.Background(), p, add, [2]int{})
		runErr <- err // rejected: the pool is full
	}()
	require.ErrorIs(t, <-runErr, pool.ErrQueueFull)

	require.NoError(t, p.Close())
	// The caller of a running task that ignores its ctx is answered at once.
	_, err = running.Wait()
	require.ErrorIs(t, err, pool.ErrClosed)
	for _, f := range queued {
		_, err := f.Wait()
		require.ErrorIs(t, err, pool.ErrClosed)
	}
	_, err = pool.Submit(context.Background(), p, add, [2]int{})
	require.ErrorIs(t, err, pool.ErrClosed)
	_, err = pool.Run(context.Background(), p, add, [2]int{})
	require.ErrorIs(t, err, pool.ErrClosed)
	require.NoError(t, p.Close(), "Close is idempotent")
	st := p.Stats()
	assert.Equal(t, uint64(4), st.Canceled)
	assert.Equal(t, 0, st.Queued)

	close(release) // let the ctx-ignoring task return so its worker exits
	require.NoError(t, p.Shutdown(context.Background()))
	assert.Equal(t, 0, p.Stats().Workers)
}

// Workers start on demand up to Workers; those above MinWorkers exit after
// IdleTimeout, and MinWorkers stay.
func TestIdleWorkersExit(t *testing.T) {
	t.Parallel()
	synctest.Test(t, testIdleWorkersExit)
}

// testIdleWorkersExit runs in a synctest bubble: idle timeouts pass on the
// bubble's clock, and synctest.Wait lets the reaping settle.
func testIdleWorkersExit(t *testing.T) {
	p := newPool(t, pool.Options{Workers: 3, MinWorkers: 1, IdleTimeout: 40 * time.Millisecond})
	assert.Equal(t, 1, p.Stats().Workers, "MinWorkers start with the pool")

	release := make(chan struct{})
	started := make(chan int, 3)
	futures := submitEach(t, context.Background(), p, gates(0, 3, started, release, false))
	for range 3 {
		<-started
	}
	assert.Equal(t, 3, p.Stats().Workers)
	close(release)
	requireIDs(t, futures, 0)
	time.Sleep(50 * time.Millisecond) // past the idle timeout
	synctest.Wait()
	require.Equal(t, 1, p.Stats().Workers, "the workers above MinWorkers exit")
	time.Sleep(150 * time.Millisecond) // several idle timeouts more
	synctest.Wait()
	assert.Equal(t, 1, p.Stats().Workers, "MinWorkers are kept however idle")

	out, err := pool.Run(context.Background(), p, add, [2]int{1, 1})
	require.NoError(t, err)
	assert.Equal(t, 2, out)
}

// A busy worker is not dismissed, however long its task runs.
func TestBusyWorkerIsNotReaped(t *testing.T) {
	t.Parallel()
	p := newPool(t, pool.Options{Workers: 1, IdleTimeout: 10 * time.Millisecond})
	out, err := pool.Run(context.Background(), p, spin, 100*time.Millisecond)
	require.NoError(t, err)
	assert.Equal(t, 1, out)
	require.Eventually(t, func() bool { return p.Stats().Workers == 0 }, 5*time.Second, 5*time.Millisecond)
	out, err = pool.Run(context.Background(), p, add, [2]int{1, 1})
	require.NoError(t, err, "a new worker starts on demand")
	assert.Equal(t, 2, out)
}
