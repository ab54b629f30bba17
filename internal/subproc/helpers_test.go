package subproc

import (
	"context"
	"runtime"
	"testing"

	"github.com/offloadgo/offload/internal/registry"
)

// register adds a task to the registry, as pool.Register does, for the
// worker side's tests.
func register[In, Out any](name string, fn func(context.Context, In) (Out, error)) struct{} {
	if _, err := registry.Add(registry.Entry{Name: name, Invoke: registry.Invoker(fn)}); err != nil {
		panic(err)
	}
	return struct{}{}
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
