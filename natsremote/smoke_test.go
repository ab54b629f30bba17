package natsremote_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/natsremote"
	"github.com/offloadgo/offload/natsremote/embedded"
	"github.com/offloadgo/offload/pool"
)

func TestRunOnANode(t *testing.T) {
	t.Parallel()
	s := startServer(t, embedded.Options{})
	serve(t, s, natsremote.ServeOptions{Pool: "smoke", Local: pool.Options{Workers: 2}})
	p := remotePool(t, connect(t, s), "smoke", pool.Options{Workers: 2})
	waitNodes(t, p, 1)
	ctx := testCtx(t)
	for i := range 100 {
		out, err := pool.Run(ctx, p, add, [2]int{i, 1})
		require.NoError(t, err)
		assert.Equal(t, i+1, out)
	}
	st := p.Stats()
	assert.EqualValues(t, 100, st.Completed)
}
