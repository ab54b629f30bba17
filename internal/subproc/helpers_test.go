package subproc

import (
	"context"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/offloadgo/offload/internal/registry"
	"github.com/offloadgo/offload/internal/workerproc"
)

// register adds a task to the registry, as pool.Register does, for the
// worker side's tests.
func register[In, Out any](name string, fn func(context.Context, In) (Out, error)) struct{} {
	if _, err := registry.Add(registry.Entry{Name: name, Invoke: registry.Invoker(fn)}); err != nil {
		panic(err)
	}
	return struct{}{}
}

// writeCall sends the worker at the other end of parent call id of task,
// with trace as its header's trace context (nil: none) and an empty
// struct as its input.
func writeCall(t *testing.T, parent *workerproc.Conn, id uint64, task string, trace []byte) {
	t.Helper()
	body, err := appendCallHeader(nil, task, trace)
	require.NoError(t, err)
	input, err := msgpack.Marshal(struct{}{})
	require.NoError(t, err)
	require.NoError(t, parent.WriteFrame(workerproc.Frame{Kind: kindCall, ID: id, Body: append(body, input...)}))
}

// readReply reads parent's next frame and requires it to answer call id.
func readReply(t *testing.T, parent *workerproc.Conn, id uint64) workerproc.Frame {
	t.Helper()
	f, err := parent.ReadFrame()
	require.NoError(t, err)
	require.Equal(t, id, f.ID)
	return f
}

// replyString is the string a result frame carries; f must be a result.
func replyString(t *testing.T, f workerproc.Frame) string {
	t.Helper()
	require.Equal(t, kindResult, f.Kind, "body %q", f.Body)
	var s string
	require.NoError(t, msgpack.Unmarshal(f.Body, &s))
	return s
}

// skipUnsupportedPlatform skips t where PlatformSupport refuses
// Subprocess workers, which need the worker channel (and, for moves,
// shared-memory segments): anywhere but Linux, macOS and the BSDs.
func skipUnsupportedPlatform(t *testing.T) {
	t.Helper()
	if err := PlatformSupport(runtime.GOOS); err != nil {
		t.Skip(err.Error())
	}
}
