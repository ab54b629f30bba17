package pool

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"sync"

	"github.com/offloadgo/offload/internal/xfer"
	_ "github.com/offloadgo/offload/transfer" // implements xfer's functions, at init: Register uses them
)

// Task is a unit of work registered with Register. Its zero value is not
// usable: running it fails with ErrUnknownTask.
type Task[In, Out any] struct {
	def *taskDef[In, Out] // nil for the zero Task
}

// taskDef is what Register knows of a task. Task points to it, so that a
// call carries one pointer rather than a copy.
type taskDef[In, Out any] struct {
	name  string
	fn    func(context.Context, In) (Out, error)
	calls sync.Pool // of *call[In, Out], recycled by Run
	// holdsIn and holdsOut say whether In and Out can hold a
	// *transfer.Buffer, worked out once here rather than per call.
	holdsIn, holdsOut bool
}

// Name returns the name the task was registered under ("" for the zero
// Task).
func (t Task[In, Out]) Name() string {
	if t.def == nil {
		return ""
	}
	return t.def.name
}

// entry is the untyped view of a registered task, for worker processes that
// receive a task by name and its input as bytes.
type entry struct {
	name string
	// invoke decodes the input into a fresh In, runs the task and returns
	// its output for the caller to encode. Register builds it, knowing In.
	invoke func(ctx context.Context, decode func(in any) error) (any, error)
}

// registry is the only package-level state: written by Register during
// program initialisation, read afterwards.
var registry = struct {
	sync.RWMutex
	tasks map[string]entry
}{tasks: map[string]entry{}}

// Register records fn as the task name and returns its handle. Call it at
// package level (in a var declaration or init) so that a worker process,
// which is the same binary, registers the same tasks before it serves them.
// Register panics if name is empty, fn is nil, or name is already taken:
// those are programming errors found at start-up.
func Register[In, Out any](name string, fn func(context.Context, In) (Out, error)) Task[In, Out] {
	if name == "" {
		panic("pool: Register with an empty task name")
	}
	if fn == nil {
		panic(fmt.Sprintf("pool: Register(%q) with a nil function", name))
	}
	registry.Lock()
	defer registry.Unlock()
	if _, dup := registry.tasks[name]; dup {
		panic(fmt.Sprintf("pool: task %q registered twice", name))
	}
	t := Task[In, Out]{def: &taskDef[In, Out]{
		name:     name,
		fn:       fn,
		holdsIn:  xfer.CanHold(reflect.TypeFor[In]()),
		holdsOut: xfer.CanHold(reflect.TypeFor[Out]()),
	}}
	registry.tasks[name] = entry{name: name, invoke: func(ctx context.Context, decode func(any) error) (any, error) {
		var in In
		if err := decode(&in); err != nil {
			return nil, err
		}
		return fn(ctx, in)
	}}
	return t
}

// registeredNames lists the registered tasks in sorted order.
func registeredNames() []string {
	registry.RLock()
	defer registry.RUnlock()
	names := make([]string, 0, len(registry.tasks))
	for n := range registry.tasks {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
