package natsjobs_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/natsjobs"
	"github.com/offloadgo/offload/natsremote/embedded"
)

// A Status read while the queue's streams have no leader (two servers
// of three down) tries again until they elect one, and answers.
func TestStatusWaitsOutALeaderlessBucket(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()
	c, err := embedded.StartCluster(3, embedded.Options{StoreDir: t.TempDir()})
	require.NoError(t, err)
	t.Cleanup(c.Shutdown)
	nc := dialCluster(t, strings.Split(c.URLs(), ",")[0])
	q, err := natsjobs.Open(ctx, nc, natsjobs.Options{Name: "statusout", Replicas: 3, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	t.Cleanup(func() { _ = q.Close() })
	id, err := natsjobs.Enqueue(ctx, q, double, Num{1}) // no worker: it stays queued
	require.NoError(t, err)

	c.Servers[1].Shutdown()
	c.Servers[2].Shutdown()
	type answer struct {
		st  natsjobs.Status
		err error
	}
	answered := make(chan answer, 1)
	go func() {
		st, err := q.Status(ctx, id)
		answered <- answer{st, err}
	}()
	start := time.Now()
	require.NoError(t, c.Restart(1))
	a := <-answered
	require.NoError(t, a.err)
	t.Logf("Status returned %v after the restart began", time.Since(start))
	assert.Equal(t, natsjobs.Queued, a.st.State)
	assert.Equal(t, id, a.st.ID)
}
