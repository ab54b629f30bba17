package natsjobs_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/natsjobs"
	"github.com/offloadgo/offload/pool"
)

// gates holds the gate each gated job waits at, by its Key.
var gates sync.Map // string → chan struct{}

// gated runs until its gate (gates[in.Key]) opens, or its ctx ends.
var gated = pool.Register("natsjobs.gated", func(ctx context.Context, in Keyed) (string, error) {
	ran(in.Key)
	gate, _ := gates.Load(in.Key)
	select {
	case <-gate.(chan struct{}):
		return "opened", nil
	case <-ctx.Done():
		return "", context.Cause(ctx)
	}
})

// enqueueGated enqueues a gated job with the test's key, and waits until
// it runs. It returns the job, its key and its gate.
func enqueueGated(ctx context.Context, t *testing.T, q *natsjobs.Queue) (natsjobs.ID, string, chan struct{}) {
	t.Helper()
	k := key(t)
	gate := make(chan struct{})
	gates.Store(k, gate)
	id, err := natsjobs.Enqueue(ctx, q, gated, Keyed{Key: k})
	require.NoError(t, err)
	require.Eventually(t, func() bool { return runCount(k) == 1 }, 20*time.Second, time.Millisecond)
	return id, k, gate
}

// A job that ends while its status bucket has no leader (two servers of
// three down) has its outcome written once the bucket elects one again:
// it is not left Running, to run again when its lease passes.
func TestOutcomeWaitsOutALeaderlessBucket(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()
	c, nc := startCluster(t)
	// The lease outlasts the test: only the outcome write can end the job.
	q, err := natsjobs.Open(ctx, nc, natsjobs.Options{Name: "outage", Replicas: 3, Lease: time.Minute})
	require.NoError(t, err)
	t.Cleanup(func() { _ = q.Close() }) // after Serve's cleanup
	p := newPool(t, pool.Options{Workers: 1})
	serve(t, q, p, natsjobs.ServeOptions{})

	id, k, gate := enqueueGated(ctx, t, q)
	c.Servers[1].Shutdown()
	c.Servers[2].Shutdown()
	close(gate) // the job ends with no quorum to write its outcome
	require.Eventually(t, func() bool { return p.Load().InFlight == 0 }, 20*time.Second, time.Millisecond)
	start := time.Now()
	require.NoError(t, c.Restart(1))
	out, err := natsjobs.Wait(ctx, q, gated, id)
	require.NoError(t, err)
	assert.Equal(t, "opened", out)
	t.Logf("the outcome was written %v after the restart began", time.Since(start))
	st, err := q.Status(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, 1, st.Attempt)
	assert.Equal(t, 1, runCount(k), "ran once")
}
