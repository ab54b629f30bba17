package transfer

import (
	"reflect"
	"testing"

	"github.com/offloadgo/offload/internal/shmbuf"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"
)

// The machinery knows a Buffer by its shape, and this package registers
// nothing with it but msgpack's extension: these check that the real
// *Buffer is found, moved, refused and encoded as the pool's transports
// expect. (shmbuf's own tests run the same code on a Buffer of theirs.)
func TestBufferIsKnownToTheMachinery(t *testing.T) {
	t.Parallel()
	type task struct {
		In   *Buffer
		Name string
	}
	assert.True(t, shmbuf.CanHold(reflect.TypeFor[*Buffer]()))
	assert.True(t, shmbuf.CanHold(reflect.TypeFor[task]()))
	assert.False(t, shmbuf.CanHold(reflect.TypeFor[struct{ N int }]()))

	b := moved(8, 3)
	in := task{In: b, Name: "x"}
	require.NoError(t, shmbuf.Check(in))
	require.NoError(t, shmbuf.MoveAt(&in))
	assert.True(t, b.Detached(), "the caller's handle is detached")
	assert.Equal(t, byte(3), in.In.Bytes()[0], "the moved handle owns the memory")
	require.ErrorIs(t, shmbuf.Check(task{In: b}), ErrDetached)
	require.ErrorIs(t, shmbuf.Check(struct{ B Buffer }{}), ErrNotTransferable)

	_, err := msgpack.Marshal(in)
	require.ErrorIs(t, err, shmbuf.ErrNoPeer, "plain msgpack can't encode a Buffer")

	data, _, err := shmbuf.CopyPeer{}.Marshal(in)
	require.NoError(t, err)
	var there task
	require.NoError(t, shmbuf.CopyPeer{}.Unmarshal(data, &there))
	assert.Equal(t, in.In.Bytes(), there.In.Bytes(), "a *Buffer crosses as the extension")

	shmbuf.ReleaseAll(there)
	shmbuf.ReleaseAll(in)
	assert.True(t, there.In.Detached())
	assert.True(t, in.In.Detached())
}
