package pool_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/pool"
)

// Stats.MaxWorkers is the pool's limit as SetWorkers last set it, as
// Load.MaxWorkers, whatever the live workers (which start on demand).
func TestStatsMaxWorkersFollowsSetWorkers(t *testing.T) {
	t.Parallel()
	p := newPool(t, pool.Options{Workers: 3})
	st := p.Stats()
	assert.Equal(t, 3, st.MaxWorkers)
	assert.Zero(t, st.Workers, "none started yet")
	for _, n := range []int{5, 1, 2} {
		require.NoError(t, p.SetWorkers(n))
		assert.Equal(t, n, p.Stats().MaxWorkers)
		assert.Equal(t, n, p.Load().MaxWorkers)
	}
	require.Error(t, p.SetWorkers(0))
	assert.Equal(t, 2, p.Stats().MaxWorkers, "a refused SetWorkers changes nothing")
	var zero pool.Pool
	assert.Zero(t, zero.Stats().MaxWorkers, "a Pool not made by New")
}
