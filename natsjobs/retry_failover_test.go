package natsjobs_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/natsjobs"
	"github.com/offloadgo/offload/pool"
)

// A Retry made while the queue's streams have no leader (two servers of
// three down) tries again until they elect one, and queues the dead job
// once.
func TestRetryWaitsOutALeaderlessBucket(t *testing.T) {
	t.Parallel()
	ctx, c, q := outageQueue(t, "retryout")

	// The job dies under a worker that stops before the outage: the
	// job Retry queues stays queued, to be counted.
	k := key(t)
	id, err := natsjobs.Enqueue(ctx, q, always, Keyed{Key: k}, natsjobs.MaxAttempts(1))
	require.NoError(t, err)
	serving, stopServing := context.WithCancel(ctx)
	served := make(chan error, 1)
	p := newPool(t, pool.Options{Workers: 1})
	go func() { served <- natsjobs.Serve(serving, q, p, natsjobs.ServeOptions{}) }()
	_, err = natsjobs.Wait(ctx, q, always, id)
	require.ErrorIs(t, err, natsjobs.ErrDead)
	stopServing()
	require.NoError(t, <-served)

	require.NoError(t, throughOutage(t, c, "Retry", func() error { return q.Retry(ctx, id) }))

	st, err := q.Status(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, natsjobs.Queued, st.State)
	assert.EqualValues(t, 1, storedMsgs(t, dialCluster(t, c.URLs()), "OFFLOAD_JOBS_retryout"), "the job queued once")
	assert.Equal(t, 1, runCount(k), "it ran once, before the Retry")
}
