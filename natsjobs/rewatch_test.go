package natsjobs_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/internal/testkit"
	"github.com/offloadgo/offload/natsjobs"
	"github.com/offloadgo/offload/pool"
)

// A Wait that waits across a server restart hears its job end once the
// server is back. The restart loses the consumer of the queue's watch;
// the watch is renewed on the reconnect, and the job ends only after
// that: the watch from before, stopped by then, is not the one that
// hears of it, whenever its heartbeats would have told it it was lost.
func TestWaitHearsTheEndAfterAServerRestart(t *testing.T) {
	t.Parallel()
	s, nc := startRestartable(t)
	q := open(t, nc, natsjobs.Options{})
	ctx := testkit.Ctx(t)
	serve(t, q, newPool(t, pool.Options{Workers: 1}), natsjobs.ServeOptions{})

	id, k, gate := enqueueGated(ctx, t, q)
	type waited struct {
		out string
		err error
	}
	done := make(chan waited, 1)
	go func() {
		out, err := natsjobs.Wait(ctx, q, gated, id)
		done <- waited{out, err}
	}()
	require.Eventually(t, func() bool { return natsjobs.WaitersForTest(q, id) == 1 }, 20*time.Second, time.Millisecond)
	rewatches := natsjobs.RewatchesForTest(q)

	require.NoError(t, s.Restart())
	require.Eventually(t, func() bool { return natsjobs.RewatchesForTest(q) > rewatches }, 20*time.Second, time.Millisecond,
		"the watch is renewed on the reconnect")
	opened := time.Now()
	close(gate) // the job ends while the server is back
	select {
	case w := <-done:
		require.NoError(t, w.err)
		assert.Equal(t, "opened", w.out)
		t.Logf("Wait returned %v after the job was let end", time.Since(opened))
	case <-ctx.Done():
		st, err := q.Status(t.Context(), id)
		t.Fatalf("Wait did not return; the job's status: %+v (%v)", st, err)
	}
	assert.Equal(t, 1, runCount(k), "ran once")
}
