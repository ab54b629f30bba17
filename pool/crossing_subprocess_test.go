package pool_test

import (
	"context"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/pool"
	"github.com/offloadgo/offload/transfer"
)

// resizeIn has a field msgpack skips: in a worker process opts is 0.
type resizeIn struct {
	Width int
	opts  int
}

// fitIn crosses whole: its unexported field is tagged out, its time
// encodes itself, its Buffer moves, and its list is recursive.
type fitIn struct {
	Width  int
	When   time.Time
	Buf    *transfer.Buffer
	Next   *fitIn
	cached int `msgpack:"-"`
}

var (
	unfitResize = pool.Register("test.unfit-resize", func(_ context.Context, in resizeIn) (int, error) {
		return in.Width * in.opts, nil
	})
	unfitOut = pool.Register("test.unfit-out", func(_ context.Context, n int) (resizeIn, error) {
		return resizeIn{Width: n, opts: n}, nil
	})
	unfitChan = pool.Register("test.unfit-chan", func(_ context.Context, in struct{ Done chan int }) (int, error) {
		return 0, nil
	})
	unfitFunc = pool.Register("test.unfit-func", func(_ context.Context, in []struct{ F func() }) (int, error) {
		return 0, nil
	})
	unfitComplex = pool.Register("test.unfit-complex", func(_ context.Context, in map[string]complex128) (int, error) {
		return 0, nil
	})
	unfitUintptr = pool.Register("test.unfit-uintptr", func(_ context.Context, in struct{ P *struct{ U uintptr } }) (int, error) {
		return 0, nil
	})
	unfitUnsafe = pool.Register("test.unfit-unsafe", func(_ context.Context, n int) (unsafe.Pointer, error) {
		return nil, nil
	})
	fitEcho = pool.Register("test.fit-echo", func(_ context.Context, in fitIn) (fitIn, error) {
		in.cached = 0 // what the caller gets from a worker process
		return in, nil
	})
)

// A task whose In or Out would lose a field or fail to encode in a worker
// process is refused at submission, naming the type and the field.
func TestSubprocessRefusesTypesThatCannotCross(t *testing.T) {
	t.Parallel()
	p, _ := newProcPool(t, pool.Options{Workers: 1})
	ctx := testCtx(t)
	for _, tt := range []struct {
		run  func() error
		want string
	}{
		{func() error { _, err := pool.Run(ctx, p, unfitResize, resizeIn{Width: 2, opts: 3}); return err },
			`pool: task "test.unfit-resize": In type pool_test.resizeIn: field opts (unexported) would arrive zeroed in a worker process`},
		{func() error { _, err := pool.Submit(ctx, p, unfitOut, 1); return err },
			`pool: task "test.unfit-out": Out type pool_test.resizeIn: field opts (unexported) would arrive zeroed from a worker process`},
		{func() error { _, err := pool.SubmitAll(ctx, p, unfitResize, []resizeIn{{}, {}}); return err },
			`pool: task "test.unfit-resize": In type pool_test.resizeIn: field opts (unexported) would arrive zeroed in a worker process`},
		{func() error { _, err := pool.Run(ctx, p, unfitChan, struct{ Done chan int }{}); return err },
			`pool: task "test.unfit-chan": In type struct { Done chan int }: field Done (chan int) can't cross to a worker process: msgpack can't encode a chan`},
		{func() error { _, err := pool.Run(ctx, p, unfitFunc, nil); return err },
			`pool: task "test.unfit-func": In type []struct { F func() }: field [i].F (func()) can't cross to a worker process: msgpack can't encode a func`},
		{func() error { _, err := pool.Run(ctx, p, unfitComplex, nil); return err },
			`pool: task "test.unfit-complex": In type map[string]complex128: field [k] (complex128) can't cross to a worker process: msgpack can't encode a complex128`},
		{func() error { _, err := pool.Run(ctx, p, unfitUintptr, struct{ P *struct{ U uintptr } }{}); return err },
			`pool: task "test.unfit-uintptr": In type struct { P *struct { U uintptr } }: field P.U (uintptr) can't cross to a worker process: msgpack can't encode a uintptr`},
		{func() error { _, err := pool.Run(ctx, p, unfitUnsafe, 1); return err },
			`pool: task "test.unfit-unsafe": Out type unsafe.Pointer can't cross from a worker process: msgpack can't encode a unsafe.Pointer`},
	} {
		err := tt.run()
		require.Error(t, err)
		assert.Equal(t, tt.want, err.Error())
		assert.ErrorIs(t, err, transfer.ErrNotTransferable)
	}
	st := p.Stats()
	assert.Zero(t, st.Submitted)
	assert.EqualValues(t, 9, st.Rejected) // SubmitAll's two count apiece

	// What crosses whole still runs.
	in := fitIn{Width: 4, When: time.Unix(5, 6), Buf: transfer.Move([]byte("moved")), Next: &fitIn{Width: 7}, cached: 8}
	out, err := pool.Run(ctx, p, fitEcho, in)
	require.NoError(t, err)
	assert.Equal(t, 4, out.Width)
	assert.True(t, out.When.Equal(time.Unix(5, 6)))
	assert.Equal(t, []byte("moved"), out.Buf.Bytes())
	assert.Equal(t, 7, out.Next.Width)
	out.Buf.Release()
}

// In process nothing crosses, and nothing is refused.
func TestInProcessRunsTypesThatCannotCross(t *testing.T) {
	t.Parallel()
	p := newPool(t, pool.Options{Workers: 1})
	n, err := pool.Run(context.Background(), p, unfitResize, resizeIn{Width: 2, opts: 3})
	require.NoError(t, err)
	assert.Equal(t, 6, n)
	out, err := pool.Run(context.Background(), p, unfitOut, 5)
	require.NoError(t, err)
	assert.Equal(t, resizeIn{Width: 5, opts: 5}, out)
	_, err = pool.Run(context.Background(), p, unfitChan, struct{ Done chan int }{make(chan int)})
	require.NoError(t, err)
}
