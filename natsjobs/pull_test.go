package natsjobs_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/internal/testkit"
	"github.com/offloadgo/offload/natsjobs"
	"github.com/offloadgo/offload/pool"
)

// A Serve whose requests for jobs the server ends as it shuts down (409
// Server Shutdown, while they wait on an empty queue) gets their slots
// back, asks again once the server is back, and runs the jobs enqueued
// after: more than its slots, so that a slot not given back shows.
func TestServeGoesOnAfterServerRestart(t *testing.T) {
	t.Parallel()
	s, nc := startRestartable(t)
	q := open(t, nc, natsjobs.Options{})
	ctx := testkit.Ctx(t)
	const workers = 2
	serve(t, q, newPool(t, pool.Options{Workers: workers}), natsjobs.ServeOptions{})
	// A job through first: Serve's requests for the next are out.
	id, err := natsjobs.Enqueue(ctx, q, double, Num{1})
	require.NoError(t, err)
	_, err = natsjobs.Wait(ctx, q, double, id)
	require.NoError(t, err)

	require.NoError(t, s.Restart())
	ids := make([]natsjobs.ID, 2*workers) // more than the slots: each must come back
	for i := range ids {
		// Enqueue retries while the client reconnects.
		require.Eventually(t, func() bool {
			ids[i], err = natsjobs.Enqueue(ctx, q, double, Num{i})
			return err == nil
		}, 20*time.Second, 10*time.Millisecond)
	}
	// By Status: this is about Serve, not about Wait's watch.
	for _, id := range ids {
		require.Eventually(t, func() bool {
			st, err := q.Status(ctx, id)
			return err == nil && st.State == natsjobs.Succeeded
		}, 20*time.Second, 5*time.Millisecond)
	}
}
