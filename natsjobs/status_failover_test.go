package natsjobs_test

import (
	"testing"

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

	var st natsjobs.Status
	require.NoError(t, throughOutage(t, c, "Status", func() (err error) {
		st, err = q.Status(ctx, id)
		return err
	}))
	assert.Equal(t, natsjobs.Queued, st.State)
	assert.Equal(t, id, st.ID)
}
