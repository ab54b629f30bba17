package subproc

import (
	"context"

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
