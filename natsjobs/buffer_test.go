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
