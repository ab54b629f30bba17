package shmbuf

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"
)

func TestCopyPeerRoundTrip(t *testing.T) {
	t.Parallel()
	var c CopyPeer
	b := Move([]byte("bytes that cross by copy"))
	empty := Move(nil)
	data, segs, err := c.Marshal(taskOut{Back: b, Out: empty, Sum: 7})
	require.NoError(t, err)
	assert.Empty(t, segs)
	assert.False(t, b.Detached(), "encoding leaves the handle to its owner")

	var out taskOut
	require.NoError(t, c.Unmarshal(data, &out))
	assert.Equal(t, "bytes that cross by copy", string(out.Back.Bytes()))
	assert.NotSame(t, &b.Bytes()[0], &out.Back.Bytes()[0], "a copy, not the same memory")
	assert.False(t, out.Out.Detached())
	assert.Zero(t, out.Out.Len())
	assert.Equal(t, 7, out.Sum)
	out.Back.Release()
	assert.True(t, out.Back.Detached())
	assert.Equal(t, "bytes that cross by copy", string(b.Bytes()))

	var plain int
	data, _, err = c.Marshal(42)
	require.NoError(t, err)
	require.NoError(t, c.Unmarshal(data, &plain))
	assert.Equal(t, 42, plain)
}

func TestCopyPeerRefuses(t *testing.T) {
	t.Parallel()
	var c CopyPeer
	t.Run("a detached Buffer", func(t *testing.T) {
		b := Move([]byte("x"))
		b.Release()
		_, _, err := c.Marshal(taskIn{In: b})
		assert.ErrorIs(t, err, ErrDetached)
		assert.ErrorIs(t, err, ErrNotTransferable)
	})
	t.Run("a plain msgpack Marshal of a Buffer", func(t *testing.T) {
		_, err := msgpack.Marshal(taskIn{In: Move([]byte("x"))})
		assert.ErrorIs(t, err, ErrNoPeer)
	})
	t.Run("a shared-memory reference", func(t *testing.T) {
		ref := appendRef(nil, Ref{Segment: SegmentID{Arena: 1}, Length: 1})
		data, err := msgpack.Marshal(extMessage{ref})
		require.NoError(t, err)
		var in taskIn
		assert.ErrorIs(t, c.Unmarshal(data, &in), ErrBadRef)
		assert.True(t, in.In == nil || in.In.Detached())
	})
	t.Run("segments and releases", func(t *testing.T) {
		assert.ErrorIs(t, c.Adopt(SegmentID{}, -1, 1), ErrBadSegment)
		assert.ErrorIs(t, c.ApplyReleases([]Ref{{}}), ErrBadRef)
		assert.NoError(t, c.ApplyReleases(nil))
		assert.Nil(t, c.DrainReleases())
		assert.NoError(t, c.Close())
	})
}

// extMessage encodes as a taskIn whose In is a Buffer extension with the
// given payload, as a hostile or mismatched sender might write it.
type extMessage struct{ payload []byte }

func (m extMessage) EncodeMsgpack(enc *msgpack.Encoder) error {
	if err := enc.EncodeArrayLen(2); err != nil {
		return err
	}
	if err := enc.EncodeExtHeader(extID, len(m.payload)); err != nil {
		return err
	}
	if _, err := enc.Writer().Write(m.payload); err != nil {
		return err
	}
	return enc.EncodeString("")
}
