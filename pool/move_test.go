package pool_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/pool"
	"github.com/offloadgo/offload/transfer"
)

type frame struct {
	ID  int
	Buf *transfer.Buffer
}

var (
	// sumBytes reads a moved Buffer and returns a new one holding the sum.
	sumBytes = pool.Register("test.sum-bytes", func(_ context.Context, in frame) (frame, error) {
		var sum byte
		for _, b := range in.Buf.Bytes() {
			sum += b
		}
		out, err := transfer.NewBuffer(1)
		if err != nil {
			return frame{}, err
		}
		out.Bytes()[0] = sum
		return frame{ID: in.ID, Buf: out}, nil
	})
	echoBuffer = pool.Register("test.echo-buffer", func(_ context.Context, b *transfer.Buffer) (*transfer.Buffer, error) {
		return b, nil
	})
)

// In process, a Buffer in a task's input moves to the task (the caller's
// handle is detached, no bytes are copied) and one in its output moves back.
func TestBufferMovesInProcess(t *testing.T) {
	t.Parallel()
	p := newPool(t, pool.Options{Workers: 1})
	in := transfer.Move([]byte{1, 2, 3, 4})
	data := in.Bytes()
	out, err := pool.Run(context.Background(), p, sumBytes, frame{ID: 7, Buf: in})
	require.NoError(t, err)
	assert.True(t, in.Detached(), "the sender's handle is detached")
	assert.Nil(t, in.Bytes())
	assert.Equal(t, 7, out.ID)
	require.NotNil(t, out.Buf)
	assert.Equal(t, []byte{10}, out.Buf.Bytes())
	out.Buf.Release()

	// Moving the same memory back and forth copies nothing.
	b := transfer.Move(data)
	back, err := pool.Run(context.Background(), p, echoBuffer, b)
	require.NoError(t, err)
	assert.True(t, b.Detached())
	assert.Same(t, &data[0], &back.Bytes()[0], "a pointer handoff, not a copy")

	// A detached Buffer can't be handed over again: a clear error, no slot used.
	_, err = pool.Run(context.Background(), p, echoBuffer, b)
	require.ErrorIs(t, err, transfer.ErrDetached)
	assert.Equal(t, uint64(1), p.Stats().Rejected)
	back.Release()
}

// A rejected submission leaves the caller's Buffer with the caller.
func TestRejectedSubmissionKeepsBuffer(t *testing.T) {
	t.Parallel()
	p := newPool(t, pool.Options{Workers: 1, MaxQueue: pool.NoQueue})
	release := make(chan struct{})
	f, err := pool.Submit(context.Background(), p, wait, gate{release: release})
	require.NoError(t, err)
	b := transfer.Move([]byte("keep me"))
	_, err = pool.Submit(context.Background(), p, echoBuffer, b)
	require.ErrorIs(t, err, pool.ErrQueueFull)
	assert.False(t, b.Detached())
	assert.Equal(t, []byte("keep me"), b.Bytes())
	close(release)
	_, err = f.Wait()
	require.NoError(t, err)
}
