package natsremote_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/pool"
)

// SubmitAll on a Remote pool: the batch runs on the nodes, results in
// input order; its admission is local, so a batch bigger than the room
// the pool's live nodes offer is refused whole and publishes nothing.
func TestSubmitAllRemote(t *testing.T) {
	t.Parallel()
	k := keysFor("submit-all")
	w, nc, p := tappedPool(t, "submit-all", 2, pool.Options{Workers: 2, MaxQueue: 2}) // room for 4
	ctx := testCtx(t)

	ins := make([][2]int, 4)
	for i := range ins {
		ins[i] = [2]int{i, 100}
	}
	futures, err := pool.SubmitAll(ctx, p, add, ins)
	require.NoError(t, err)
	for i, f := range futures {
		out, err := f.Wait()
		require.NoError(t, err)
		assert.Equal(t, i+100, out)
	}

	held, err := pool.Submit(ctx, p, hold, k("held"))
	require.NoError(t, err)
	holdStarted(t, k("held"))
	w.onlyHeartbeats(t, nc, func() {
		_, err = pool.SubmitAll(ctx, p, hold, []string{k("r1"), k("r2"), k("r3"), k("r4")})
		require.ErrorIs(t, err, pool.ErrQueueFull)
		assert.Contains(t, err.Error(), "room for 3")
	})
	for _, key := range []string{"r1", "r2", "r3", "r4"} {
		assert.Zero(t, gateFor(k(key)).runs.Load(), "a task of the refused batch ran")
	}
	assert.EqualValues(t, 5, p.Stats().Submitted)
	assert.EqualValues(t, 4, p.Stats().Rejected)

	close(gateFor(k("held")).release)
	_, err = held.Wait()
	require.NoError(t, err)
}
