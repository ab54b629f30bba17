package shmbuf

import (
	"reflect"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/internal/testkit"
)

func TestMoveTopLevel(t *testing.T) {
	t.Parallel()
	b := testkit.CountingBuffer(t, NewBuffer, 1<<20, 7)
	first := &b.Bytes()[0]
	got, err := Moved(b)
	require.NoError(t, err)
	assert.NotSame(t, b, got, "a new handle")
	assert.True(t, b.Detached())
	assert.Nil(t, b.Bytes())
	assert.Zero(t, b.Len())
	assert.Same(t, first, &got.Bytes()[0], "same memory, zero bytes copied")
	_, err = Moved(b)
	require.ErrorIs(t, err, ErrDetached, "double move")

	// Moving back (the task returning it) works the same way.
	back, err := Moved(got)
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

func TestMoveNested(t *testing.T) {
	t.Parallel()
	bufs := make([]*Buffer, 9)
	for i := range bufs {
		bufs[i] = testkit.CountingBuffer(t, NewBuffer, 10, byte(i*10))
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
	out, err := Moved(in)
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

func TestMoveFailureRestores(t *testing.T) {
	t.Parallel()
	live, dead := testkit.CountingBuffer(t, NewBuffer, 8, 1), testkit.CountingBuffer(t, NewBuffer, 8, 2)
	dead.Release()
	in := []*Buffer{live, dead}
	_, err := Moved(in)
	require.ErrorIs(t, err, ErrDetached)
	assert.False(t, live.Detached(), "a failed move leaves every handle as it was")
	assert.Equal(t, byte(1), live.Bytes()[0])
	live.Release()
}

type node struct {
	Next *node
	Buf  *Buffer
}

func TestMoveCyclesAndAliases(t *testing.T) {
	t.Parallel()
	b := testkit.CountingBuffer(t, NewBuffer, 4, 9)
	n := &node{Buf: b}
	n.Next = n
	out, err := Moved(n)
	require.NoError(t, err)
	assert.Same(t, out, out.Next, "the cycle survives")
	assert.True(t, b.Detached())
	assert.False(t, out.Buf.Detached())

	c := testkit.CountingBuffer(t, NewBuffer, 4, 3)
	pair, err := Moved([]*Buffer{c, c})
	require.NoError(t, err)
	assert.Same(t, pair[0], pair[1], "an aliased Buffer moves once")
	pair[0].Release()
	out.Buf.Release()
}

func TestMovePlainTypes(t *testing.T) {
	t.Parallel()
	type plain struct {
		A int
		B string
		C []byte
	}
	v := plain{1, "x", []byte("y")}
	got, err := Moved(v)
	require.NoError(t, err)
	assert.Equal(t, v, got)
	assert.Same(t, &v.C[0], &got.C[0], "plain slices are shared")
	n, err := Moved(42)
	require.NoError(t, err)
	assert.Equal(t, 42, n)
	var nilBuf *Buffer
	nb, err := Moved(nilBuf)
	require.NoError(t, err)
	assert.Nil(t, nb)
	var nilAny any
	a, err := Moved(nilAny)
	require.NoError(t, err)
	assert.Nil(t, a)
}

func TestMoveConcurrentOneWins(t *testing.T) {
	t.Parallel()
	for range 50 {
		b := testkit.CountingBuffer(t, NewBuffer, 16, 0)
		var wg sync.WaitGroup
		results := make(chan *Buffer, 8)
		for range 8 {
			wg.Go(func() {
				if nb, err := Moved(b); err == nil {
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
	dead := testkit.CountingBuffer(t, NewBuffer, 1, 0)
	dead.Release()
	live := testkit.CountingBuffer(t, NewBuffer, 1, 0)
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
		{"chan field", withChan{}, ErrNotTransferable, "shmbuf.withChan.C is a chan"},
		{"func in slice", []withFunc{{}}, ErrNotTransferable, "func"},
		{"func behind interface", []any{1, func() {}}, ErrNotTransferable, "func"},
		{"buffer by value", byValue{}, ErrNotTransferable, "Buffer held by value"},
		{"detached buffer", map[string]*Buffer{"a": dead}, ErrDetached, "detached"},
		{"aliased buffer", []*Buffer{live, live}, ErrNotTransferable, "twice"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := Check(tc.v)
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

func TestReleaseAll(t *testing.T) {
	t.Parallel()
	a, b := testkit.CountingBuffer(t, NewBuffer, 1, 0), testkit.CountingBuffer(t, NewBuffer, 1, 0)
	ReleaseAll(map[string]any{"a": a, "b": []*Buffer{b, nil}})
	assert.True(t, a.Detached())
	assert.True(t, b.Detached())
	ReleaseAll(nil)
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

func canHold[T any]() bool { return CanHold(reflect.TypeFor[T]()) }
