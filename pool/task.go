package pool

import (
	"context"
	"fmt"
	"reflect"

	"github.com/offloadgo/offload/internal/prof"
	"github.com/offloadgo/offload/internal/registry"
	"github.com/offloadgo/offload/internal/seam"
	"github.com/offloadgo/offload/internal/shmbuf"
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
	index int // in the registry: where a Pool keeps the task's recycled calls
	// holdsIn and holdsOut say whether In and Out can hold a
	// *transfer.Buffer, worked out once here rather than per call.
	holdsIn, holdsOut bool
	// extern says a program of another language serves the task
	// (Extern): its values cross as JSON.
	extern bool
	// unfit refuses the task on pools whose workers In and Out can't
	// reach intact (see crossing.go).
	unfit unfitness
	// labels puts an in-process run of the task under its pprof labels.
	labels prof.Labels
}

// Name returns the name the task was registered under ("" for the zero
// Task).
func (t Task[In, Out]) Name() string {
	if t.def == nil {
		return ""
	}
	return t.def.name
}

// Register records fn as the task name and returns its handle. Call it at
// package level (in a var declaration or init) so that a worker process,
// which is the same binary, registers the same tasks before it serves them.
// Register panics if name is empty, fn is nil, or name is already taken:
// those are programming errors found at start-up.
//
// In and Out cross to a worker process or node as msgpack, which carries
// exported fields only. On a Subprocess or Remote pool, a task whose In
// or Out type has a field that would arrive zeroed (unexported, and not
// tagged `msgpack:"-"`) or that msgpack can't encode (a channel, a func,
// a complex number, a uintptr, an unsafe.Pointer) fails at submission
// with an error that names the type and the field's path and matches
// transfer.ErrNotTransferable; an InProcess pool runs it as it is. A type
// that encodes itself (msgpack.CustomEncoder or Marshaler,
// encoding.BinaryMarshaler or TextMarshaler, time.Time) and a
// *transfer.Buffer are taken as they are. What an interface field holds
// is known only per call: msgpack fails on a channel in it, but a struct
// in it loses its unexported fields unnoticed.
func Register[In, Out any](name string, fn func(context.Context, In) (Out, error)) Task[In, Out] {
	if name == "" {
		panic("pool: Register with an empty task name")
	}
	if fn == nil {
		panic(fmt.Sprintf("pool: Register(%q) with a nil function", name))
	}
	t := Task[In, Out]{def: &taskDef[In, Out]{
		name:     name,
		fn:       fn,
		holdsIn:  shmbuf.CanHold(reflect.TypeFor[In]()),
		holdsOut: shmbuf.CanHold(reflect.TypeFor[Out]()),
		unfit:    unfitnessOf(name, reflect.TypeFor[In](), reflect.TypeFor[Out]()),
		labels:   prof.New(name, InProcess.String()),
	}}
	index, err := registry.Add(registry.Entry{
		Name:        name,
		Fingerprint: registry.Fingerprint(reflect.TypeFor[In](), reflect.TypeFor[Out]()),
		Invoke:      registry.Invoker(fn),
		Submit:      t.submitAny,
	})
	if err != nil {
		panic("pool: " + err.Error())
	}
	t.def.index = index
	return t
}

// inForm is how the task's input crosses to a worker process or node.
func (d *taskDef[In, Out]) inForm() seam.Form {
	switch {
	case d.extern:
		return seam.JSON
	case d.holdsIn:
		return seam.Moves
	}
	return seam.Msgpack
}

// submitAny is Submit for a caller that knows the task only by name and
// holds its input encoded: a worker node, running a call it was sent
// through its local pool p (a *Pool). freed hears when the task's slot is
// free again (see registry.Entry.Submit).
func (t Task[In, Out]) submitAny(ctx context.Context, p any, decode func(any) error, freed func()) (func() (any, error), error) {
	var in In
	if err := decode(&in); err != nil {
		return nil, err
	}
	c := newCall(ctx, t, in)
	c.freed = freed
	if err := p.(*Pool).admit(c, admitNow|admitWatch); err != nil {
		return nil, err
	}
	return func() (any, error) { return c.Wait() }, nil
}
