package subproc

import (
	"context"

	"github.com/offloadgo/offload/internal/registry"
)

// register adds a task to the registry, as pool.Register does, for the
// worker side's tests.
func register[In, Out any](name string, fn func(context.Context, In) (Out, error)) struct{} {
	err := registry.Add(registry.Entry{Name: name, Invoke: func(ctx context.Context, decode func(any) error) (any, error) {
		var in In
		if err := decode(&in); err != nil {
			return nil, err
		}
		return fn(ctx, in)
	}})
	if err != nil {
		panic(err)
	}
	return struct{}{}
}
