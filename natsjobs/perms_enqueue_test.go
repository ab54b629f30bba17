package natsjobs_test

import (
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/internal/testkit"
	"github.com/offloadgo/offload/natsjobs"
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
