package transfer

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func filled(t testing.TB, n int, seed byte) *Buffer {
	t.Helper()
	b, err := NewBuffer(n)
	require.NoError(t, err)
	for i := range b.Bytes() {
		b.Bytes()[i] = seed + byte(i)
	}
	return b
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

func TestNewBufferReusedSpaceIsZeroed(t *testing.T) {
	t.Parallel()
	a := newArena(1 << 16)
	defer a.close()
	blk, err := a.alloc(1000)
	require.NoError(t, err)
	for i := range blk.data {
		blk.data[i] = 0xAA
	}
	blk.free()
	again, err := a.alloc(1000)
	require.NoError(t, err)
	assert.Equal(t, blk.off, again.off, "space is reused")
	assert.Equal(t, make([]byte, 1000), again.data)
}

func TestReleaseAndDetached(t *testing.T) {
	t.Parallel()
	var zero Buffer
	assert.True(t, zero.Detached())
	assert.Nil(t, zero.Bytes())
	zero.Release() // no-op

	b := filled(t, 100, 1)
	b.Release()
	assert.True(t, b.Detached())
	assert.Nil(t, b.Bytes())
	assert.Zero(t, b.Len())
	b.Release() // double release is a no-op
	_, err := handOverValue(b)
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

func TestHandOverTopLevel(t *testing.T) {
	t.Parallel()
	b := filled(t, 1<<20, 7)
	first := &b.Bytes()[0]
	got, err := handOverValue(b)
	require.NoError(t, err)
	assert.NotSame(t, b, got, "a new handle")
	assert.True(t, b.Detached())
	assert.Nil(t, b.Bytes())
	assert.Zero(t, b.Len())
	assert.Same(t, first, &got.Bytes()[0], "same memory, zero bytes copied")
	_, err = handOverValue(b)
	require.ErrorIs(t, err, ErrDetached, "double move")

	// Moving back (the task returning it) works the same way.
	back, err := handOverValue(got)
	require.NoError(t, err)
	assert.True(t, got.Detached())
	assert.Equal(t, byte(7), back.Bytes()[0])
	back.Release()
}

type inner struct {
	Buf  *Buffer
	Name string
}

type nested struct {
	Top     *Buffer
	Inner   inner
	Ptr     *inner
	List    []*Buffer
	Arr     [2]*Buffer
	ByName  map[string]*Buffer
	Any     any
	Plain   []int
	private *Buffer
	Skipped *Buffer `msgpack:"-"`
}

func TestHandOverNested(t *testing.T) {
	t.Parallel()
	bufs := make([]*Buffer, 9)
	for i := range bufs {
		bufs[i] = filled(t, 10, byte(i*10))
	}
	in := nested{
		Top:     bufs[0],
		Inner:   inner{Buf: bufs[1], Name: "x"},
		Ptr:     &inner{Buf: bufs[2]},
		List:    []*Buffer{bufs[3], nil},
		Arr:     [2]*Buffer{bufs[4]},
		ByName:  map[string]*Buffer{"a": bufs[5]},
		Any:     []any{bufs[6]},
		Plain:   []int{1, 2},
		private: bufs[7],
		Skipped: bufs[8],
	}
	origPtr, origList := in.Ptr, in.List
	out, err := handOverValue(in)
	require.NoError(t, err)

	moved := []*Buffer{out.Top, out.Inner.Buf, out.Ptr.Buf, out.List[0], out.Arr[0], out.ByName["a"], out.Any.([]any)[0].(*Buffer)}
	for i, nb := range moved {
		assert.True(t, bufs[i].Detached(), "buffer %d detached", i)
		require.False(t, nb.Detached(), "buffer %d live in the result", i)
		assert.Equal(t, byte(i*10), nb.Bytes()[0])
	}
	assert.False(t, bufs[7].Detached(), "unexported fields are not walked")
	assert.False(t, bufs[8].Detached(), `msgpack:"-" fields are not walked`)
	assert.Equal(t, "x", out.Inner.Name)
	assert.Nil(t, out.List[1])
	// The path to a Buffer is copied, so the caller's containers still hold
	// only the detached handles...
	assert.NotSame(t, origPtr, out.Ptr)
	assert.Same(t, bufs[3], origList[0])
	assert.True(t, in.ByName["a"].Detached())
	// ...and what holds no Buffer is shared.
	assert.Same(t, &in.Plain[0], &out.Plain[0])
}

func TestHandOverFailureRestores(t *testing.T) {
	t.Parallel()
	live, dead := filled(t, 8, 1), filled(t, 8, 2)
	dead.Release()
	in := []*Buffer{live, dead}
	_, err := handOverValue(in)
	require.ErrorIs(t, err, ErrDetached)
	assert.False(t, live.Detached(), "a failed hand-over leaves every handle as it was")
	assert.Equal(t, byte(1), live.Bytes()[0])
	live.Release()
}

type node struct {
	Next *node
	Buf  *Buffer
}

func TestHandOverCyclesAndAliases(t *testing.T) {
	t.Parallel()
	b := filled(t, 4, 9)
	n := &node{Buf: b}
	n.Next = n
	out, err := handOverValue(n)
	require.NoError(t, err)
	assert.Same(t, out, out.Next, "the cycle survives")
	assert.True(t, b.Detached())
	assert.False(t, out.Buf.Detached())

	c := filled(t, 4, 3)
	pair, err := handOverValue([]*Buffer{c, c})
	require.NoError(t, err)
	assert.Same(t, pair[0], pair[1], "an aliased Buffer moves once")
	pair[0].Release()
	out.Buf.Release()
}

func TestHandOverPlainTypes(t *testing.T) {
	t.Parallel()
	type plain struct {
		A int
		B string
		C []byte
	}
	v := plain{1, "x", []byte("y")}
	got, err := handOverValue(v)
	require.NoError(t, err)
	assert.Equal(t, v, got)
	assert.Same(t, &v.C[0], &got.C[0], "plain slices are shared")
	n, err := handOverValue(42)
	require.NoError(t, err)
	assert.Equal(t, 42, n)
	var nilBuf *Buffer
	nb, err := handOverValue(nilBuf)
	require.NoError(t, err)
	assert.Nil(t, nb)
	var nilAny any
	a, err := handOverValue(nilAny)
	require.NoError(t, err)
	assert.Nil(t, a)
}

func TestHandOverConcurrentOneWins(t *testing.T) {
	t.Parallel()
	for range 50 {
		b := filled(t, 16, 0)
		var wg sync.WaitGroup
		results := make(chan *Buffer, 8)
		for range 8 {
			wg.Go(func() {
				if nb, err := handOverValue(b); err == nil {
					results <- nb
				}
			})
		}
		wg.Wait()
		close(results)
		var winners []*Buffer
		for nb := range results {
			winners = append(winners, nb)
		}
		require.Len(t, winners, 1)
		winners[0].Release()
	}
}

func TestCheck(t *testing.T) {
	t.Parallel()
	dead := filled(t, 1, 0)
	dead.Release()
	live := filled(t, 1, 0)
	defer live.Release()
	type withChan struct{ C chan int }
	type withFunc struct{ F func() }
	type hidden struct {
		//lint:ignore U1000 never read: it is here to show the codec skips it
		c chan int
		F func() `msgpack:"-"`
		N int
	}
	type byValue struct{ B Buffer }
	cases := []struct {
		name     string
		v        any
		wantErr  error
		wantText string
	}{
		{"nil", nil, nil, ""},
		{"int", 1, nil, ""},
		{"plain struct", inner{Name: "x"}, nil, ""},
		{"live buffer", live, nil, ""},
		{"unexported and skipped fields", hidden{}, nil, ""},
		{"chan", make(chan int), ErrNotTransferable, "chan"},
		{"chan field", withChan{}, ErrNotTransferable, "transfer.withChan.C is a chan"},
		{"func in slice", []withFunc{{}}, ErrNotTransferable, "func"},
		{"func behind interface", []any{1, func() {}}, ErrNotTransferable, "func"},
		{"buffer by value", byValue{}, ErrNotTransferable, "Buffer held by value"},
		{"detached buffer", map[string]*Buffer{"a": dead}, ErrDetached, "detached"},
		{"aliased buffer", []*Buffer{live, live}, ErrNotTransferable, "twice"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := checkValue(tc.v)
			if tc.wantErr == nil {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, tc.wantErr)
			require.ErrorIs(t, err, ErrNotTransferable)
			assert.Contains(t, err.Error(), tc.wantText)
		})
	}
}

func TestCopy(t *testing.T) {
	t.Parallel()
	b := filled(t, 32, 5)
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

	dead := filled(t, 1, 0)
	dead.Release()
	_, err = Copy([]*Buffer{filled(t, 1, 0), dead})
	require.ErrorIs(t, err, ErrDetached)

	n, err := Copy(3)
	require.NoError(t, err)
	assert.Equal(t, 3, n)
}

func TestReleaseAll(t *testing.T) {
	t.Parallel()
	a, b := filled(t, 1, 0), filled(t, 1, 0)
	releaseAll(map[string]any{"a": a, "b": []*Buffer{b, nil}})
	assert.True(t, a.Detached())
	assert.True(t, b.Detached())
	releaseAll(nil)
}

func TestCanHold(t *testing.T) {
	type plain struct {
		A int
		B []string
	}
	type nested struct {
		P plain
		M map[string][]*Buffer
	}
	assert.False(t, canHold[int]())
	assert.False(t, canHold[string]())
	assert.False(t, canHold[plain]())
	assert.False(t, canHold[[]byte]())
	assert.True(t, canHold[*Buffer]())
	assert.True(t, canHold[nested]())
	assert.True(t, canHold[[]*Buffer]())
	assert.True(t, canHold[any](), "an interface may hold a Buffer")
}
