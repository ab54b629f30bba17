package pool_test

import (
	"context"
	"slices"
	"testing"

	"github.com/offloadgo/offload/pool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// procReverse returns its input reversed: every byte crosses to the
// worker and back, each way in its own order.
var procReverse = pool.Register("proc.reverse", func(_ context.Context, in []byte) ([]byte, error) {
	out := slices.Clone(in)
	slices.Reverse(out)
	return out, nil
})

// Copied inputs and outputs of every size arrive whole, both ways, on one
// worker, with small calls between them: bodies from a MiB up take their
// own socket on Linux (see internal/workerproc), smaller ones the pipe,
// and neither may lose its place in the stream.
func TestSubprocessBigCopiesBothWays(t *testing.T) {
	t.Parallel()
	p, _ := newProcPool(t, pool.Options{Workers: 1, Subprocess: pool.SubprocessOptions{MaxPayload: 32 << 20}})
	ctx := testCtx(t)
	for i, n := range []int{512 << 10, 1<<20 - 64, 1 << 20, 5<<20 + 7, 24 << 20, 3} {
		in := make([]byte, n)
		for j := range in {
			in[j] = byte(j/253) ^ byte(j) ^ byte(i)
		}
		out, err := pool.Run(ctx, p, procReverse, in)
		require.NoError(t, err, "%d bytes", n)
		want := slices.Clone(in)
		slices.Reverse(want)
		assert.True(t, slices.Equal(want, out), "%d bytes came back reversed", n)

		sum, err := pool.Run(ctx, p, add, [2]int{i, n})
		require.NoError(t, err)
		assert.Equal(t, i+n, sum, "a small call after %d bytes", n)
	}
	assert.Zero(t, p.Stats().Crashed)
}
