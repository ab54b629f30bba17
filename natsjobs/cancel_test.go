package natsjobs_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/internal/testkit"
	"github.com/offloadgo/offload/natsjobs"
	"github.com/offloadgo/offload/pool"
)

// A queued job cancelled never runs; cancelling it again says it ended.
func TestCancelQueued(t *testing.T) {
	t.Parallel()
	q, nc := startQueue(t, natsjobs.Options{})
	ctx := testkit.Ctx(t)
	id, err := natsjobs.Enqueue(ctx, q, sleepy, Keyed{Key: key(t)})
	require.NoError(t, err)
	requireCancelsOnce(ctx, t, q, id)
	assert.Zero(t, queuedJobs(t, nc), "out of the work stream")
	assert.ErrorIs(t, q.Cancel(ctx, "nosuchjob"), natsjobs.ErrNotFound)

	serve(t, q, newPool(t, pool.Options{Workers: 1}), natsjobs.ServeOptions{})
	requireCanceledUnrun(ctx, t, q, sleepy, id)
}

// A running job cancelled has its ctx cancelled, and ends Canceled.
func TestCancelRunning(t *testing.T) {
	t.Parallel()
	q, nc := startQueue(t, natsjobs.Options{})
	serve(t, q, newPool(t, pool.Options{Workers: 1}), natsjobs.ServeOptions{})
	ctx := testkit.Ctx(t)
	id, err := natsjobs.Enqueue(ctx, q, sleepy, Keyed{Key: key(t), Sleep: time.Minute})
	require.NoError(t, err)
	require.Eventually(t, func() bool { return runCount(key(t)) == 1 }, 20*time.Second, 5*time.Millisecond)
	require.NoError(t, q.Cancel(ctx, id))
	_, err = natsjobs.Wait(ctx, q, sleepy, id)
	require.ErrorIs(t, err, natsjobs.ErrCanceled)
	require.Eventually(t, func() bool { return queuedJobs(t, nc) == 0 }, 20*time.Second, 5*time.Millisecond, "acked once its run ended")
	st, err := q.Status(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, natsjobs.Canceled, st.State)
	assert.Equal(t, 1, runCount(key(t)))
	err = q.Cancel(ctx, id)
	assert.ErrorIs(t, err, natsjobs.ErrEnded)

	// The worker is free again.
	requireDoubled(ctx, t, q, 2)
}

// requireCanceledUnrun waits for job id of task, and requires that it
// ended Canceled without an attempt and that nothing ran with the
// test's key.
func requireCanceledUnrun[In, Out any](ctx context.Context, t *testing.T, q *natsjobs.Queue, task pool.Task[In, Out], id natsjobs.ID) {
	t.Helper()
	_, err := natsjobs.Wait(ctx, q, task, id)
	require.ErrorIs(t, err, natsjobs.ErrCanceled)
	st, err := q.Status(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, natsjobs.Canceled, st.State)
	assert.Zero(t, st.Attempt)
	assert.Zero(t, runCount(key(t)))
}

// requireCancelsOnce cancels job id, and requires that cancelling it
// again says it ended, cancelled.
func requireCancelsOnce(ctx context.Context, t *testing.T, q *natsjobs.Queue, id natsjobs.ID) {
	t.Helper()
	require.NoError(t, q.Cancel(ctx, id))
	err := q.Cancel(ctx, id)
	require.ErrorIs(t, err, natsjobs.ErrEnded)
	assert.ErrorContains(t, err, "canceled")
}
