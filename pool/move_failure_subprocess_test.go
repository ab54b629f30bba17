package pool_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/offloadgo/offload/internal/testkit"
	"github.com/offloadgo/offload/pool"
	"github.com/offloadgo/offload/transfer"
)

// Buffers that never reach a task, or whose call fails on the way: an
// encoder or decoder that refuses, an output over MaxPayload, a call
// dropped from the queue. Each frees what it moved and loses nothing.

// refuses fails to encode, as a type with its own msgpack encoder may.
type refuses struct{}

func (refuses) EncodeMsgpack(*msgpack.Encoder) error { return errors.New("refuses to encode") }

type padded struct {
	Buf *transfer.Buffer
	Pad []byte
	R   *refuses
}

var padLen = pool.Register("test.pad-len", func(_ context.Context, in padded) (int, error) {
	return len(in.Pad) + in.Buf.Len(), nil
})

// An input that fails as the process's Peer encodes it at send time fails
// the task; the Buffers the call owned are freed, whether nothing moved
// (an encoder's error) or they moved for a frame over MaxPayload (the
// process is replaced).
func TestSubprocessSendTimeEncodeFailure(t *testing.T) {
	// Not parallel: reads the process arena's use.
	graces(t, func(t *testing.T, o pool.Options) {
		o.Subprocess.MaxPayload = 4096
		p, _ := newProcPool(t, o)
		ctx := testCtx(t)
		pid, err := pool.Run(ctx, p, workerPID, 0)
		require.NoError(t, err)
		base := transfer.Stats().InUse

		b := testkit.CountingBuffer(t, transfer.NewBuffer, 1<<20, 1)
		_, err = pool.Run(ctx, p, padLen, padded{Buf: b, R: &refuses{}})
		require.ErrorContains(t, err, "refuses to encode")
		assert.True(t, b.Detached(), "the call owned it from admission")
		assert.Equal(t, base, transfer.Stats().InUse, "freed after the failed send")
		same, err := pool.Run(ctx, p, workerPID, 0)
		require.NoError(t, err)
		assert.Equal(t, pid, same, "nothing moved: the process lives on")

		b = testkit.CountingBuffer(t, transfer.NewBuffer, 1<<20, 1)
		_, err = pool.Run(ctx, p, padLen, padded{Buf: b, Pad: make([]byte, 5000)})
		require.ErrorIs(t, err, pool.ErrPayloadTooLarge)
		n, err := pool.Run(ctx, p, padLen, padded{Buf: testkit.CountingBuffer(t, transfer.NewBuffer, 10, 1), Pad: make([]byte, 100)})
		require.NoError(t, err, "the replacement process serves")
		assert.Equal(t, 110, n)
		other, err := pool.Run(ctx, p, workerPID, 0)
		require.NoError(t, err)
		assert.NotEqual(t, pid, other, "Buffers moved for an unsendable frame: the process was replaced")
		require.NoError(t, p.Shutdown(ctx)) // waits for the old process's reap
		assert.Equal(t, base, transfer.Stats().InUse, "what it was lent is freed")
	})
}

// The worker's side of the same: an output over MaxPayload that holds
// Buffers fails the task, and the process is replaced.
func TestSubprocessOutputTooLargeWithBuffer(t *testing.T) {
	t.Parallel()
	p, _ := newProcPool(t, pool.Options{Workers: 1, Subprocess: pool.SubprocessOptions{MaxPayload: 4096}})
	ctx := testCtx(t)
	pid, err := pool.Run(ctx, p, workerPID, 0)
	require.NoError(t, err)
	_, err = pool.Run(ctx, p, bigBundle, 5000)
	require.ErrorIs(t, err, pool.ErrPayloadTooLarge)
	other, err := pool.Run(ctx, p, workerPID, 0)
	require.NoError(t, err)
	assert.NotEqual(t, pid, other)
	out, err := pool.Run(ctx, p, bigBundle, 10)
	require.NoError(t, err)
	assert.Equal(t, "xxxxxxxxxx", out.Name)
	require.Len(t, out.Parts, 1)
	assert.Equal(t, 64, out.Parts[0].Len())
	out.Parts[0].Release()
}

// bigBundle returns a bundle named with n bytes and a Buffer of 64.
var bigBundle = pool.Register("test.big-bundle", func(_ context.Context, n int) (bundle, error) {
	b, err := transfer.NewBuffer(64)
	if err != nil {
		return bundle{}, err
	}
	return bundle{Name: strings.Repeat("x", n), Parts: []*transfer.Buffer{b}}, nil
})

// A call that leaves the queue without running — its caller gave up, or
// the pool closed — frees the Buffers it was handed at admission.
func TestQueuedBufferFreedWhenDropped(t *testing.T) {
	// Not parallel: reads the process arena's use.
	for _, iso := range []pool.Isolation{pool.InProcess, pool.Subprocess} {
		t.Run(iso.String(), func(t *testing.T) {
			p := newPool(t, pool.Options{Isolation: iso, Workers: 1})
			base := transfer.Stats().InUse
			release := make(chan struct{})
			defer close(release)
			busy, err := pool.Submit(testCtx(t), p, nap, time.Minute)
			require.NoError(t, err)

			ctx, cancel := context.WithCancel(testCtx(t))
			b := testkit.CountingBuffer(t, transfer.NewBuffer, 1<<20, 1)
			f, err := pool.Submit(ctx, p, inspect, b)
			require.NoError(t, err)
			assert.True(t, b.Detached(), "handed to the call at admission")
			cancel()
			_, err = f.Wait()
			require.ErrorIs(t, err, context.Canceled)
			assert.Equal(t, base, transfer.Stats().InUse, "an abandoned call frees its input")

			queued, err := pool.Submit(testCtx(t), p, inspect, testkit.CountingBuffer(t, transfer.NewBuffer, 1<<20, 2))
			require.NoError(t, err)
			p.Close()
			_, err = queued.Wait()
			require.ErrorIs(t, err, pool.ErrClosed)
			_, err = busy.Wait()
			require.Error(t, err)
			assert.Equal(t, base, transfer.Stats().InUse, "a call dropped by Close frees its input")
		})
	}
}

// undecodable refuses to decode, as a type with its own decoder may.
type undecodable struct{ V int }

func (u *undecodable) DecodeMsgpack(*msgpack.Decoder) error { return errors.New("refuses to decode") }

var undecodableFirst = pool.Register("test.undecodable-first", func(_ context.Context, in struct {
	U undecodable
	B *transfer.Buffer
}) (int, error) {
	return 0, nil
})

// An input that fails to decode in the worker after moving — the Buffer
// after the failure is never read there — fails the task, and the process
// is replaced so that the Buffer is freed, not lent forever.
func TestSubprocessUndecodableInputFreesBuffers(t *testing.T) {
	// Not parallel: reads the process arena's use.
	graces(t, func(t *testing.T, o pool.Options) {
		p, _ := newProcPool(t, o)
		ctx := testCtx(t)
		pid, err := pool.Run(ctx, p, workerPID, 0)
		require.NoError(t, err)
		base := transfer.Stats().InUse
		in := struct {
			U undecodable
			B *transfer.Buffer
		}{B: testkit.CountingBuffer(t, transfer.NewBuffer, 1<<20, 1)}
		_, err = pool.Run(ctx, p, undecodableFirst, in)
		require.ErrorContains(t, err, "refuses to decode")
		other, err := pool.Run(ctx, p, workerPID, 0)
		require.NoError(t, err)
		assert.NotEqual(t, pid, other, "the process was replaced")
		require.NoError(t, p.Shutdown(ctx))
		assert.Equal(t, base, transfer.Stats().InUse, "the Buffer it never read is freed")
	})
}
