package pool_test

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/pool"
)

// A caller may keep a resolved Future for as long as it likes (in a map of
// results, say); the task's input must not stay alive with it.

// retained is an input whose collection the tests can observe.
type retained struct{ pad [1 << 10]byte }

var (
	inputSize = pool.Register("test.input-size", func(_ context.Context, in *retained) (int, error) {
		return len(in.pad), nil
	})
	bytesLen = pool.Register("test.bytes-len", func(_ context.Context, in []byte) (int, error) {
		return len(in), nil
	})
)

func TestHeldFutureDoesNotKeepItsInput(t *testing.T) {
	p := newPool(t, pool.Options{Workers: 1})
	in := &retained{}
	inGone := watchCollection(in)
	f, err := pool.Submit(testCtx(t), p, inputSize, in)
	require.NoError(t, err)
	n, err := f.Wait()
	require.NoError(t, err)
	require.Equal(t, len(in.pad), n)
	in = nil

	assertCollected(t, "the input", inGone)
	runtime.KeepAlive(f)
}

// Nor must it keep the Submit ctx alive, with the values a request's
// context carries, whether or not that ctx can end: the pool derives a
// context from it for the task and, for one that can end, watches it.
func TestHeldFutureDoesNotKeepItsContext(t *testing.T) {
	type key struct{}
	for _, cancellable := range []bool{false, true} {
		t.Run(fmt.Sprintf("cancellable=%t", cancellable), func(t *testing.T) {
			p := newPool(t, pool.Options{Workers: 1})
			val := &retained{}
			valGone := watchCollection(val)
			parent, cancel := context.Background(), context.CancelFunc(func() {})
			if cancellable {
				// The test keeps the parent's cancel; only the ctx made
				// from it below holds the value.
				parent, cancel = context.WithCancel(parent)
			}
			defer cancel()
			ctx := context.WithValue(parent, key{}, val)
			val = nil
			f, err := pool.Submit(ctx, p, inputSize, &retained{})
			require.NoError(t, err)
			_, err = f.Wait()
			require.NoError(t, err)
			ctx = nil

			assertCollected(t, "the ctx", valGone)
			runtime.KeepAlive(f)
		})
	}
}

// The same holds for a task that never ran: its caller gave up while it
// was queued, and the Future resolved with the ctx's error.
func TestHeldFutureOfAnAbandonedTaskKeepsNothing(t *testing.T) {
	type key struct{}
	p := newPool(t, pool.Options{Workers: 1})
	_, free := occupyWorker(t, p)
	defer free()

	in, val := &retained{}, &retained{}
	inGone, valGone := watchCollection(in), watchCollection(val)
	parent, cancel := context.WithCancel(context.Background())
	ctx := context.WithValue(parent, key{}, val)
	f, err := pool.Submit(ctx, p, inputSize, in)
	require.NoError(t, err)
	in, val, ctx = nil, nil, nil
	cancel()
	_, err = f.Wait()
	require.ErrorIs(t, err, context.Canceled)

	assertCollected(t, "the input", inGone)
	assertCollected(t, "the ctx", valGone)
	runtime.KeepAlive(f)
}

// A Subprocess call's input is encoded before admission; once it is sent,
// a held Future must not pin the encoded body either. The input is larger
// than the bodies the pool keeps for reuse, so only the call could pin it.
func TestHeldSubprocessFutureDoesNotKeepItsEncodedInput(t *testing.T) {
	const size = 72 << 20
	p, _ := newProcPool(t, pool.Options{Workers: 1, Subprocess: pool.SubprocessOptions{MaxPayload: 2 * size}})
	base := heapAfterGC()

	in := make([]byte, size)
	f, err := pool.Submit(testCtx(t), p, bytesLen, in)
	require.NoError(t, err)
	n, err := f.Wait()
	require.NoError(t, err)
	require.Equal(t, size, n)
	in = nil

	grown := int64(heapAfterGC()) - int64(base)
	assert.Less(t, grown, int64(size/2), "the heap grew by %d MiB while the Future is held", grown>>20)
	runtime.KeepAlive(f)
}

// watchCollection returns a flag set once v has been collected.
func watchCollection(v *retained) *atomic.Bool {
	gone := new(atomic.Bool)
	runtime.AddCleanup(v, func(gone *atomic.Bool) { gone.Store(true) }, gone)
	return gone
}

// assertCollected collects garbage until gone is set, failing if what
// (watched by watchCollection) stays alive.
func assertCollected(t *testing.T, what string, gone *atomic.Bool) {
	t.Helper()
	assert.Eventually(t, func() bool {
		runtime.GC()
		return gone.Load()
	}, 5*time.Second, 10*time.Millisecond, "%s lives as long as its Future", what)
}

// heapAfterGC returns the live heap after two collections (the second
// frees what the first's cleanups and sync.Pool victims let go).
func heapAfterGC() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
