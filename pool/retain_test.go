package pool_test

import (
	"context"
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
	var collected atomic.Bool
	runtime.AddCleanup(in, func(*atomic.Bool) { collected.Store(true) }, &collected)
	f, err := pool.Submit(testCtx(t), p, inputSize, in)
	require.NoError(t, err)
	n, err := f.Wait()
	require.NoError(t, err)
	require.Equal(t, len(in.pad), n)
	in = nil

	assert.Eventually(t, func() bool {
		runtime.GC()
		return collected.Load()
	}, 5*time.Second, 10*time.Millisecond, "the input lives as long as its Future")
	runtime.KeepAlive(f)
}

// A Subprocess call's input is encoded before admission; once it is sent,
// a held Future must not pin the encoded body either. The input is larger
// than the bodies the pool keeps for reuse, so only the call could pin it.
func TestHeldSubprocessFutureDoesNotKeepItsEncodedInput(t *testing.T) {
	const size = 72 << 20
	p, _ := newProcPool(t, pool.Options{Workers: 1, MaxPayload: 2 * size})
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

// heapAfterGC returns the live heap after two collections (the second
// frees what the first's cleanups and sync.Pool victims let go).
func heapAfterGC() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
