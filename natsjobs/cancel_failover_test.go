package natsjobs_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/natsjobs"
	"github.com/offloadgo/offload/natsremote/embedded"
)

// A Cancel made while the queue's streams have no leader (two servers
// of three down) tries again until they elect one, and cancels the job.
func TestCancelWaitsOutALeaderlessBucket(t *testing.T) {
	t.Parallel()
	ctx, c, q := outageQueue(t, "cancelout")
	id, err := natsjobs.Enqueue(ctx, q, double, Num{1}) // no worker: it stays queued
	require.NoError(t, err)

	require.NoError(t, throughOutage(t, c, "Cancel", func() error { return q.Cancel(ctx, id) }))
	st, err := q.Status(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, natsjobs.Canceled, st.State)
}

// outageQueue is a queue named name, kept by three servers (Replicas 3)
// for a test that stops two of them, and the ctx that bounds the test.
func outageQueue(t *testing.T, name string) (context.Context, *embedded.Cluster, *natsjobs.Queue) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	t.Cleanup(cancel)
	c, nc := startCluster(t)
	q, err := natsjobs.Open(ctx, nc, natsjobs.Options{Name: name, Replicas: 3, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	t.Cleanup(func() { _ = q.Close() })
	return ctx, c, q
}

// throughOutage stops two of c's three servers, so that the queue's
// streams have no leader, runs call (named what) on a goroutine, restarts
// one server, and returns call's error once call returns, logging how long
// after the restart began that was.
func throughOutage(t *testing.T, c *embedded.Cluster, what string, call func() error) error {
	t.Helper()
	c.Servers[1].Shutdown()
	c.Servers[2].Shutdown()
	returned := make(chan error, 1)
	go func() { returned <- call() }()
	start := time.Now()
	require.NoError(t, c.Restart(1))
	err := <-returned
	t.Logf("%s returned %v after the restart began", what, time.Since(start))
	return err
}
