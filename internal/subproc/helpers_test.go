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

// requireWorkers skips t where Subprocess workers don't run: it needs the
// worker channel (and, for moves, shared-memory segments): Linux, macOS
// and the BSDs.
func requireWorkers(t *testing.T) {
	t.Helper()
	if err := PlatformSupport(runtime.GOOS); err != nil {
		t.Skip(err.Error())
	}
}
