package natsremote_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/pool"
)

// SetWorkers caps a Remote pool's calls in flight: its workers are
// min(n, the live nodes' slots), calls running on nodes are not
// interrupted, and a call queued beyond the new bound is sent only when
// fewer than n calls are in flight.
func TestSetWorkersCapsCallsInFlight(t *testing.T) {
	t.Parallel()
	k := keysFor("set-workers")
	_, p := oneNodePool(t, "set-workers", 4, pool.Options{Workers: 3, MaxQueue: 2})
	ctx := testCtx(t)

	require.NoError(t, p.SetWorkers(6))
	l := p.Load()
	assert.Equal(t, 4, l.MaxWorkers, "capped by the node's 4 slots")
	assert.Equal(t, 4, p.Stats().MaxWorkers, "as Load says")
	assert.Equal(t, 6, l.Capacity, "4 workers + MaxQueue 2")

	submit := func(name string) *pool.Future[string] {
		t.Helper()
		f, err := pool.Submit(ctx, p, hold, k(name))
		require.NoError(t, err, name)
		return f
	}
	var running []*pool.Future[string]
	for _, name := range []string{"r1", "r2", "r3", "r4"} {
		running = append(running, submit(name))
		holdStarted(t, k(name))
	}
	require.NoError(t, p.SetWorkers(2))
	l = p.Load()
	assert.Equal(t, 2, l.MaxWorkers)
	assert.Equal(t, 2, p.Stats().MaxWorkers)
	assert.Equal(t, 4, l.Capacity, "2 workers + MaxQueue 2")
	_, err := pool.Submit(ctx, p, hold, k("refused"))
	require.ErrorIs(t, err, pool.ErrQueueFull, "4 in flight, capacity 4")

	for i, name := range []string{"r1", "r2"} {
		close(gateFor(k(name)).release)
		_, err := running[i].Wait()
		require.NoError(t, err, "a call running on its node is not interrupted")
	}
	queued := submit("queued") // 3 in flight now: room for one
	st := p.Stats()
	assert.Equal(t, 2, st.Busy, "two calls on the node, the limit")
	assert.Equal(t, 1, st.Queued, "the new call waits for one of them")
	assert.Zero(t, gateFor(k("queued")).runs.Load(), "and was sent nowhere")

	close(gateFor(k("r3")).release)
	_, err = running[2].Wait()
	require.NoError(t, err)
	holdStarted(t, k("queued"))
	close(gateFor(k("r4")).release)
	close(gateFor(k("queued")).release)
	for _, f := range []*pool.Future[string]{running[3], queued} {
		_, err := f.Wait()
		require.NoError(t, err)
	}
	assert.Equal(t, 1, gateFor(k("queued")).runs.Load())
	assert.Equal(t, 2, p.Options().Workers)
}
