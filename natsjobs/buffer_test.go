package natsjobs_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/internal/testkit"
	"github.com/offloadgo/offload/natsjobs"
	"github.com/offloadgo/offload/pool"
	"github.com/offloadgo/offload/transfer"
)

// WithBuffer is an input that moves its bytes to a pool's worker.
type WithBuffer struct{ Data *transfer.Buffer }

var withBuffer = pool.Register("natsjobs.withbuffer", func(_ context.Context, in WithBuffer) (int, error) {
	return len(in.Data.Bytes()), nil
})

// A job's input is stored, and a Buffer's memory lives in the process
// that made it: Enqueue refuses it, saying so, stores nothing, and
// leaves the Buffer with its caller.
func TestEnqueueRefusesABuffer(t *testing.T) {
	t.Parallel()
	q, nc := startQueue(t, natsjobs.Options{})
	ctx := testkit.Ctx(t)
	b, err := transfer.NewBuffer(3)
	require.NoError(t, err)
	defer b.Release()

	_, err = natsjobs.Enqueue(ctx, q, withBuffer, WithBuffer{Data: b})
	require.ErrorContains(t, err, `natsjobs: input of task "natsjobs.withbuffer" holds a *transfer.Buffer`)
	assert.ErrorContains(t, err, "use []byte")
	assert.False(t, b.Detached(), "the caller keeps its Buffer")
	assert.Len(t, b.Bytes(), 3)
	assert.Zero(t, queuedJobs(t, nc), "nothing stored")
}

// bufferOut returns a Buffer it made.
var bufferOut = pool.Register("natsjobs.bufferout", func(context.Context, Num) (*transfer.Buffer, error) {
	return transfer.NewBuffer(8)
})

// A job's output is stored too: one holding a Buffer buries the job at
// its first attempt, saying why, and Serve releases the Buffer, as a
// pool's caller would, instead of leaking its memory. Not parallel: it
// reads the process's arena, which no other test uses meanwhile.
func TestServeBuriesAndReleasesABufferOutput(t *testing.T) {
	q, _ := startQueue(t, natsjobs.Options{})
	serve(t, q, newPool(t, pool.Options{Workers: 1}), natsjobs.ServeOptions{})
	ctx := testkit.Ctx(t)
	before := transfer.Stats().InUse

	id, err := natsjobs.Enqueue(ctx, q, bufferOut, Num{1})
	require.NoError(t, err)
	_, err = natsjobs.Wait(ctx, q, bufferOut, id)
	require.ErrorIs(t, err, natsjobs.ErrDead)
	assert.ErrorContains(t, err, `natsjobs: output of task "natsjobs.bufferout" holds a *transfer.Buffer`)
	assert.ErrorContains(t, err, "return []byte")
	st, err := q.Status(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, 1, st.Attempt, "not retried: another attempt would fail alike")
	assert.Equal(t, before, transfer.Stats().InUse, "Serve released the Buffer (the job was buried after)")
}
