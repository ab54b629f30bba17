package shmbuf

import (
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/offloadgo/offload/internal/testkit"
)

// overBuffer is a type a user could define over transfer.Buffer: the same
// shape, but no msgpack extension of its own.
type overBuffer Buffer

// A Buffer is known by its shape: a struct whose only field is a Handle,
// held by pointer. Other shapes that merely contain a Handle or a Buffer
// are walked through, not taken for one.
func TestBufferShape(t *testing.T) {
	t.Parallel()
	type embedsBuffer struct {
		*Buffer
		N int
	}
	type twoFields struct {
		H Handle
		N int
	}
	assert.True(t, infoOf(reflect.TypeFor[*Buffer]()).buffer)
	assert.True(t, infoOf(reflect.TypeFor[*overBuffer]()).buffer)
	assert.False(t, infoOf(reflect.TypeFor[Buffer]()).buffer)
	assert.False(t, infoOf(reflect.TypeFor[*embedsBuffer]()).buffer)
	assert.False(t, infoOf(reflect.TypeFor[*twoFields]()).buffer)

	b := testkit.CountingBuffer(t, NewBuffer, 4, 1)
	e := &embedsBuffer{Buffer: b, N: 2}
	require.NoError(t, MoveAt(&e))
	assert.True(t, b.Detached(), "a Buffer embedded in a struct moves with it")
	assert.Equal(t, 2, e.N)
	e.Release()
}

// A type defined over Buffer moves in process like one, but msgpack
// doesn't know it: it can't cross, and says why, instead of lending memory
// that nothing in the message names.
func TestBufferTypeWithoutExtensionCantCross(t *testing.T) {
	t.Parallel()
	b := (*overBuffer)(testkit.CountingBuffer(t, NewBuffer, 4, 1))
	moved := b
	require.NoError(t, MoveAt(&moved))
	assert.True(t, b.Detached())
	assert.False(t, moved.Detached())

	err := Check(moved)
	require.ErrorIs(t, err, ErrNotTransferable)
	assert.Contains(t, err.Error(), "no extension")
	_, _, err = CopyPeer{}.Marshal(moved)
	require.ErrorIs(t, err, ErrNotTransferable)
	assert.False(t, moved.Detached(), "nothing was lent")
	moved.Release()

	registered := testkit.CountingBuffer(t, NewBuffer, 1, 0)
	_, err = msgpack.Marshal(registered)
	require.ErrorIs(t, err, ErrNoPeer, "the registered type is refused outside a Peer")
	registered.Release()
}

func TestRegisterExtRefusesOtherTypes(t *testing.T) {
	t.Parallel()
	for _, v := range []any{nil, Buffer{}, (*struct{ N int })(nil), (*struct{ H, G Handle })(nil)} {
		assert.Panics(t, func() { RegisterExt(v) }, "%T", v)
	}
}
