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

// When Serve's ctx ends, a job that finishes within Drain finishes there.
func TestDrainLetsARunningJobFinish(t *testing.T) {
	t.Parallel()
	q, _ := startQueue(t, natsjobs.Options{})
	ctx := testkit.Ctx(t)
	id, err := natsjobs.Enqueue(ctx, q, sleepy, Keyed{Key: key(t), Sleep: 300 * time.Millisecond})
	require.NoError(t, err)
	st := statusAfterServeStops(ctx, t, q, id, natsjobs.ServeOptions{Drain: 20 * time.Second})
	assert.Equal(t, natsjobs.Succeeded, st.State, "finished before Serve returned")
	assert.Equal(t, 1, st.Attempt)
}

// A job still running when Drain ends is cancelled and handed back
// without using an attempt: the next worker runs it as attempt 1.
func TestDrainHandsBackTheRest(t *testing.T) {
	t.Parallel()
	q, _ := startQueue(t, natsjobs.Options{})
	ctx := testkit.Ctx(t)
	id, err := natsjobs.Enqueue(ctx, q, sleepy, Keyed{Key: key(t), Sleep: 300 * time.Millisecond}, natsjobs.MaxAttempts(1))
	require.NoError(t, err)
	st := statusAfterServeStops(ctx, t, q, id, natsjobs.ServeOptions{})
	assert.Equal(t, natsjobs.Queued, st.State, "handed back")
	assert.Zero(t, st.Attempt)

	serve(t, q, newPool(t, pool.Options{Workers: 1}), natsjobs.ServeOptions{})
	out, err := natsjobs.Wait(ctx, q, sleepy, id)
	require.NoError(t, err, "its one attempt was not used up")
	assert.Equal(t, "slept", out)
	assert.Equal(t, 2, runCount(key(t)))
}

// Serve takes no job its pool has no free slot for: with one worker
// busy, the other jobs stay in the stream, undelivered, their leases not
// running.
func TestServeTakesOnlyWhatThePoolHasRoomFor(t *testing.T) {
	t.Parallel()
	q, nc := startQueue(t, natsjobs.Options{})
	ctx := testkit.Ctx(t)
	k := key(t)
	ids := make([]natsjobs.ID, 3)
	for i := range ids {
		var err error
		ids[i], err = natsjobs.Enqueue(ctx, q, sleepy, Keyed{Key: k, Sleep: 300 * time.Millisecond})
		require.NoError(t, err)
	}
	serve(t, q, newPool(t, pool.Options{Workers: 1}), natsjobs.ServeOptions{})
	js := jetStream(t, nc)
	cons, err := js.Consumer(ctx, "OFFLOAD_JOBS_jobs", "workers")
	require.NoError(t, err)
	require.Eventually(t, func() bool { return runCount(k) == 1 }, 20*time.Second, time.Millisecond)
	info, err := cons.Info(ctx)
	require.NoError(t, err)
	assert.Equal(t, 1, info.NumAckPending, "one job out: the one running")
	assert.EqualValues(t, 2, info.NumPending, "two waiting in the stream")
	for _, id := range ids {
		_, err := natsjobs.Wait(ctx, q, sleepy, id)
		require.NoError(t, err)
	}
}

// statusAfterServeStops serves q with a pool of one worker until the
// test's key has run once, then ends Serve's ctx, requires that Serve
// returns no error, and returns job id's status.
func statusAfterServeStops(ctx context.Context, t *testing.T, q *natsjobs.Queue, id natsjobs.ID, o natsjobs.ServeOptions) natsjobs.Status {
	t.Helper()
	stop := serveStoppable(t, q, newPool(t, pool.Options{Workers: 1}), o)
	require.Eventually(t, func() bool { return runCount(key(t)) == 1 }, 20*time.Second, 5*time.Millisecond)
	stop()
	st, err := q.Status(ctx, id)
	require.NoError(t, err)
	return st
}
