package transfer

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/internal/testkit"
)

// moved is a Buffer that Move made of n heap bytes counting up from seed.
func moved(n int, seed byte) *Buffer {
	return Move(testkit.Counting(make([]byte, n), seed))
}

func TestNewBuffer(t *testing.T) {
	t.Parallel()
	for _, n := range []int{0, 1, 63, 64, 65, 4096, 1 << 20} {
		b, err := NewBuffer(n)
		require.NoError(t, err)
		assert.Equal(t, n, b.Len())
		assert.Len(t, b.Bytes(), n)
		assert.NotNil(t, b.Bytes())
		assert.False(t, b.Detached())
		for _, c := range b.Bytes() {
			if c != 0 {
				t.Fatalf("NewBuffer(%d) is not zeroed", n)
			}
		}
		b.Release()
	}
	_, err := NewBuffer(-1)
	require.ErrorIs(t, err, ErrInvalidSize)
	_, err = NewBuffer(1 << 62)
	require.ErrorIs(t, err, ErrInvalidSize)
}

func TestReleaseAndDetached(t *testing.T) {
	t.Parallel()
	var zero Buffer
	assert.True(t, zero.Detached())
	assert.Nil(t, zero.Bytes())
	zero.Release() // no-op

	b := moved(100, 1)
	b.Release()
	assert.True(t, b.Detached())
	assert.Nil(t, b.Bytes())
	assert.Zero(t, b.Len())
	b.Release() // double release is a no-op
	_, err := Copy(b)
	require.ErrorIs(t, err, ErrDetached)
	assert.EqualError(t, ErrDetached, "transfer: buffer is detached")
}

func TestMoveWrapsWithoutCopy(t *testing.T) {
	t.Parallel()
	raw := []byte("hello")
	b := Move(raw)
	assert.Equal(t, 5, b.Len())
	assert.Same(t, &raw[0], &b.Bytes()[0], "Move must not copy")
	assert.NotNil(t, Move(nil).Bytes())
	assert.Zero(t, Move(nil).Len())
}

func TestStatsCountsLiveBuffers(t *testing.T) {
	b, err := NewBuffer(1000)
	require.NoError(t, err)
	during := Stats()
	assert.GreaterOrEqual(t, during.Segments, 1)
	assert.GreaterOrEqual(t, during.Mapped, during.InUse)
	assert.GreaterOrEqual(t, during.InUse, int64(1000))
	b.Release()
	assert.Equal(t, during.InUse-int64(os.Getpagesize()), Stats().InUse, "1000 bytes hold a segment of a page, and Release gives it back")
}

type inner struct {
	Buf  *Buffer
	Name string
}

type nested struct {
	Top    *Buffer
	Ptr    *inner
	ByName map[string]*Buffer
	Any    any
	Plain  []int
}

func TestCopy(t *testing.T) {
	t.Parallel()
	b := moved(32, 5)
	defer b.Release()
	in := nested{Top: b, Plain: []int{1, 2}, Ptr: &inner{Name: "p"}, ByName: map[string]*Buffer{}, Any: []int{3}}
	out, err := Copy(in)
	require.NoError(t, err)
	assert.False(t, b.Detached(), "Copy leaves the original live")
	require.NotSame(t, b, out.Top)
	assert.Equal(t, b.Bytes(), out.Top.Bytes())
	out.Top.Bytes()[0] = 99
	assert.Equal(t, byte(5), b.Bytes()[0], "the copy's memory is its own")
	out.Plain[0] = 100
	assert.Equal(t, 1, in.Plain[0])
	assert.NotSame(t, in.Ptr, out.Ptr)
	assert.Equal(t, "p", out.Ptr.Name)
	out.Any.([]int)[0] = 7
	assert.Equal(t, 3, in.Any.([]int)[0])
	out.Top.Release()

	dead := moved(1, 0)
	dead.Release()
	_, err = Copy([]*Buffer{moved(1, 0), dead})
	require.ErrorIs(t, err, ErrDetached)

	n, err := Copy(3)
	require.NoError(t, err)
	assert.Equal(t, 3, n)
}
