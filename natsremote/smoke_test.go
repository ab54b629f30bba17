package natsremote_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/pool"
)

func TestRunOnANode(t *testing.T) {
	t.Parallel()
	_, p := oneNodePool(t, "smoke", 2, pool.Options{Workers: 2})
	ctx := testCtx(t)
	for i := range 100 {
		out, err := pool.Run(ctx, p, add, [2]int{i, 1})
		require.NoError(t, err)
		assert.Equal(t, i+1, out)
	}
	st := p.Stats()
	assert.EqualValues(t, 100, st.Completed)
}
