package natsjobs_test

import (
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/internal/testkit"
	"github.com/offloadgo/offload/natsjobs"
	"github.com/offloadgo/offload/pool"
)

// An Enqueue by a user that may not publish jobs — a worker's, here —
// fails with the server's refusal after one try, not at its ctx's end
// nor after retrying for a minute as it does while a stream elects its
// leader: a job to run now, and then on the same connection (whose
// last error is the first refusal) a delayed one.
func TestEnqueueWithoutTheRightSaysSo(t *testing.T) {
	t.Parallel()
	s := rolesServer(t, "refuse")
	o := natsjobs.Options{Name: "refuse"}
	open(t, connectAs(t, s, "admin"), o)
	worker, _ := openAs(t, s, "worker", o)
	ctx := testkit.Ctx(t) // a minute: a refusal told only at its end would fail the test
	for _, opts := range [][]natsjobs.EnqueueOption{nil, {natsjobs.Delay(time.Hour)}} {
		start := time.Now()
		_, err := natsjobs.Enqueue(ctx, worker, double, Num{1}, opts...)
		require.ErrorIs(t, err, nats.ErrPermissionViolation)
		assert.ErrorContains(t, err, `natsjobs: enqueue task "natsjobs.double"`)
		assert.ErrorContains(t, err, "offload.jobs.refuse.")
		require.NoError(t, ctx.Err(), "refused before the ctx ended")
		t.Logf("refused after %v", time.Since(start))
	}
}

// A Cancel or a Retry by a user that may not make them — an
// enqueuer's, here — fails with the server's refusal after one try, and
// changes nothing.
func TestCancelAndRetryWithoutTheRightSaySo(t *testing.T) {
	t.Parallel()
	s := rolesServer(t, "manage")
	o := natsjobs.Options{Name: "manage", MaxAttempts: 1}
	admin := open(t, connectAs(t, s, "admin"), o)
	enqueuer, _ := openAs(t, s, "enqueuer", o)
	ctx := testkit.Ctx(t)

	queued, err := natsjobs.Enqueue(ctx, enqueuer, double, Num{1}) // no worker: it stays queued
	require.NoError(t, err)
	start := time.Now()
	err = enqueuer.Cancel(ctx, queued)
	require.ErrorIs(t, err, nats.ErrPermissionViolation)
	assert.ErrorContains(t, err, "natsjobs: cancel job "+string(queued))
	t.Logf("Cancel refused after %v", time.Since(start))
	st, err := admin.Status(ctx, queued)
	require.NoError(t, err)
	assert.Equal(t, natsjobs.Queued, st.State, "still queued")

	dead, err := natsjobs.Enqueue(ctx, admin, permanent, Keyed{})
	require.NoError(t, err)
	serve(t, admin, newPool(t, pool.Options{Workers: 1}), natsjobs.ServeOptions{})
	_, err = natsjobs.Wait(ctx, admin, permanent, dead)
	require.ErrorIs(t, err, natsjobs.ErrDead)
	start = time.Now()
	err = enqueuer.Retry(ctx, dead)
	require.ErrorIs(t, err, nats.ErrPermissionViolation)
	assert.ErrorContains(t, err, "natsjobs: retry job "+string(dead))
	t.Logf("Retry refused after %v", time.Since(start))
	require.NoError(t, ctx.Err(), "refused before the ctx ended")
}
