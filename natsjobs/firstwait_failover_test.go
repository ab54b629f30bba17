package natsjobs_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/natsjobs"
	"github.com/offloadgo/offload/natsremote/embedded"
)

// The first Wait on a queue, made while its status bucket has no leader
// (two servers of three down), ends with its ctx; or, given time, starts
// the queue's watch once the bucket elects one, and hears its job's end.
func TestFirstWaitWaitsOutALeaderlessBucket(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()
	c, err := embedded.StartCluster(3, embedded.Options{StoreDir: t.TempDir()})
	require.NoError(t, err)
	t.Cleanup(c.Shutdown)
	nc := dialCluster(t, strings.Split(c.URLs(), ",")[0])
	q, err := natsjobs.Open(ctx, nc, natsjobs.Options{Name: "firstwait", Replicas: 3, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	t.Cleanup(func() { _ = q.Close() })
	id, err := natsjobs.Enqueue(ctx, q, double, Num{1}) // no worker: it ends by its Cancel
	require.NoError(t, err)
	require.NoError(t, q.Cancel(ctx, id))

	c.Servers[1].Shutdown()
	c.Servers[2].Shutdown()
	// A first Wait whose ctx ends first gives up with it.
	short, cancelShort := context.WithTimeout(ctx, time.Second)
	defer cancelShort()
	waited := make(chan error, 1)
	go func() {
		_, err := natsjobs.Wait(short, q, double, id)
		waited <- err
	}()
	select {
	case err := <-waited:
		require.ErrorIs(t, err, context.DeadlineExceeded)
	case <-time.After(20 * time.Second):
		require.FailNow(t, "the first Wait did not end with its ctx")
	}
	go func() {
		_, err := natsjobs.Wait(ctx, q, double, id) // it starts the watch
		waited <- err
	}()
	// An outage longer than a request's default timeout (5 s): a
	// single try to make the watch gives up within it.
	time.Sleep(6 * time.Second)
	start := time.Now()
	require.NoError(t, c.Restart(1))
	require.ErrorIs(t, <-waited, natsjobs.ErrCanceled)
	t.Logf("Wait returned %v after the restart began", time.Since(start))
}
