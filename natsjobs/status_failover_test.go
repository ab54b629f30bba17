package natsjobs_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/natsjobs"
)

// A Status read while the queue's streams have no leader (two servers
// of three down) tries again until they elect one, and answers.
func TestStatusWaitsOutALeaderlessBucket(t *testing.T) {
	t.Parallel()
	ctx, c, q := outageQueue(t, "statusout")
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
