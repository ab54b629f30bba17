package orders

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/internal/testkit"
	"github.com/offloadgo/offload/pool"
	"github.com/offloadgo/offload/transfer"
)

// Every mode, in both isolations, reaches the generator's summary on a
// small input: a benchmark of the wrong computation would be worthless.
func TestModesReachTheSum(t *testing.T) {
	data, err := ordersJSON(300)
	require.NoError(t, err)
	require.Equal(t, 300, data.want.Rows)
	require.NotZero(t, data.want.Amount)
	for _, iso := range isolations {
		p := newPool(t, iso)
		for _, md := range modes {
			if !md.pooled && iso != pool.InProcess {
				continue // it runs no pool: once is enough
			}
			t.Run(md.name+"/"+iso.String(), func(t *testing.T) {
				e := &env{ctx: context.Background(), pool: p, data: data, m: &meter{}, untimed: func(f func()) { f() }}
				got, err := md.op(e)
				require.NoError(t, err)
				assert.Equal(t, data.want, got)
				require.NoError(t, e.m.failed)
				assert.Equal(t, 1, e.m.ops)
			})
		}
	}
}

// checkedOp, which every benchmark op goes through, catches a wrong sum.
func TestCheckedOpCatchesWrongSum(t *testing.T) {
	data, err := ordersJSON(10)
	require.NoError(t, err)
	wrong := &dataset{json: data.json, want: Summary{Rows: data.want.Rows, Amount: data.want.Amount + 0.01}}
	e := &env{ctx: context.Background(), data: wrong, m: &meter{}, untimed: func(f func()) { f() }}
	require.ErrorIs(t, checkedOp(modes[0], e), errWrongSum)
}

// The generator is deterministic and its rows are about the page's size.
func TestOrdersAreDeterministic(t *testing.T) {
	a, err := ordersJSON(1_000)
	require.NoError(t, err)
	rows := makeOrders(1_000)
	assert.Equal(t, summarize(rows), a.want)
	assert.Equal(t, makeOrders(1_000), rows)
	perRow := len(a.json) / 1_000
	assert.InDelta(t, 176, perRow, 8, "bytes of JSON per row")
}

// In process a []byte input is the caller's own slice, not a copy: what
// the benchmarks' "nothing crosses a boundary" rests on.
func TestInProcessSharesInput(t *testing.T) {
	p := newPool(t, pool.InProcess)
	data := []byte("[]")
	addr, err := pool.Run(context.Background(), p, dataAddress, data)
	require.NoError(t, err)
	assert.Same(t, &data[0], addr)
}

// The worker I/O count grows by at least the bytes a Subprocess task was
// sent, and by next to nothing when a Buffer moves instead: the
// copied-B/op column measures something real.
func TestWorkerIOCountsTheCopy(t *testing.T) {
	p := newPool(t, pool.Subprocess)
	data, err := ordersJSON(2_000)
	require.NoError(t, err)
	_, err = pool.Run(context.Background(), p, sumJSON, data.json) // workers up
	require.NoError(t, err)

	copied := workerIOGrowth(t, func() {
		got, err := pool.Run(context.Background(), p, sumJSON, data.json)
		require.NoError(t, err)
		require.Equal(t, data.want, got)
	})
	assert.GreaterOrEqual(t, copied, int64(len(data.json)))
	assert.Less(t, copied, int64(len(data.json))+4096, "one frame in, a small reply out")

	moved := workerIOGrowth(t, func() {
		buf, err := transfer.NewBuffer(len(data.json))
		require.NoError(t, err)
		copy(buf.Bytes(), data.json)
		got, err := pool.Run(context.Background(), p, sumBuffer, buf)
		require.NoError(t, err)
		require.Equal(t, data.want, got)
	})
	assert.Less(t, moved, int64(4096), "a reference in, a small reply out")
}

// workerIOGrowth is how much the Subprocess workers' I/O grew during f.
func workerIOGrowth(t *testing.T, f func()) int64 {
	t.Helper()
	testkit.SkipOffLinux(t, "reads the workers' I/O counts in /proc/PID/io")
	before, err := workerIO()
	require.NoError(t, err)
	f()
	after, err := workerIO()
	require.NoError(t, err)
	grown, err := ioGrowth(before, after)
	require.NoError(t, err)
	return grown
}
