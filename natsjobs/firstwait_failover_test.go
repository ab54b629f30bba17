package natsjobs_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/natsjobs"
)

// The first Wait on a queue, made while its status bucket has no leader
// (two servers of three down), ends with its ctx; or, given time, starts
// the queue's watch once the bucket elects one, and hears its job's end;
// a Wait that comes meanwhile waits for that watch only as long as its
// own ctx allows.
func TestFirstWaitWaitsOutALeaderlessBucket(t *testing.T) {
	t.Parallel()
	ctx, c, q := outageQueue(t, "firstwait")
	id, err := natsjobs.Enqueue(ctx, q, double, Num{1}) // no worker: it ends by its Cancel
	require.NoError(t, err)
	require.NoError(t, q.Cancel(ctx, id))

	c.Servers[1].Shutdown()
	c.Servers[2].Shutdown()
	// A first Wait whose ctx ends first gives up with it.
	requireWaitEndsWithItsCtx(ctx, t, q, id, "the first Wait did not end with its ctx")
	waited := make(chan error, 1)
	go func() {
		_, err := natsjobs.Wait(ctx, q, double, id) // it starts the watch
		waited <- err
	}()
	// An outage longer than a request's default timeout (5 s): a
	// single try to make the watch gives up within it.
	time.Sleep(6 * time.Second)
	// Another Wait meanwhile waits for that watch as long as its own ctx
	// allows, not as long as the first Wait's.
	requireWaitEndsWithItsCtx(ctx, t, q, id, "a second Wait waited for the first one's watch past its own ctx")
	start := time.Now()
	require.NoError(t, c.Restart(1))
	require.ErrorIs(t, <-waited, natsjobs.ErrCanceled)
	t.Logf("Wait returned %v after the restart began", time.Since(start))
}

// requireWaitEndsWithItsCtx runs a Wait for id with a 1 s ctx, and
// requires it to end with that ctx (within 20 s: a bound on a hang, not
// on time).
func requireWaitEndsWithItsCtx(ctx context.Context, t *testing.T, q *natsjobs.Queue, id natsjobs.ID, hung string) {
	t.Helper()
	short, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	waited := make(chan error, 1)
	go func() {
		_, err := natsjobs.Wait(short, q, double, id)
		waited <- err
	}()
	select {
	case err := <-waited:
		require.ErrorIs(t, err, context.DeadlineExceeded)
	case <-time.After(20 * time.Second):
		require.FailNow(t, hung)
	}
}
