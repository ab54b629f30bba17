package pool

import (
	"context"
	"fmt"
	"reflect"
	"sync"

	"github.com/offloadgo/offload/internal/prof"
	"github.com/offloadgo/offload/internal/shmbuf"
)

// FuncName is the name closures count under — in Stats.Tasks, the pprof
// label task= and the metrics by task — when run by RunFunc or SubmitFunc.
// NewClosures gives them a name of their own.
const FuncName = "func"

// RunFunc runs fn on one of p's workers and returns what it returns, as
// Run does for a registered task: the same admission (ErrQueueFull at
// once when p is full), cancellation, panics as *PanicError, Stats (under
// FuncName), pprof labels and Shed. A closure can't cross a process, so
// RunFunc runs on InProcess pools only: on a Subprocess or Remote pool it
// fails at once with an error that says to Register the task, and fn
// never runs.
func RunFunc[Out any](ctx context.Context, p *Pool, fn func(context.Context) (Out, error)) (Out, error) {
	return funcClosure[Out]().Run(ctx, p, fn)
}

// SubmitFunc is RunFunc's Submit: it accepts fn and returns its Future
// without waiting for a worker.
func SubmitFunc[Out any](ctx context.Context, p *Pool, fn func(context.Context) (Out, error)) (*Future[Out], error) {
	return funcClosure[Out]().Submit(ctx, p, fn)
}

// Closures runs closures that return Out under one name in the pool's
// books. Make it with NewClosures; the zero value runs nothing
// (ErrUnknownTask). It is safe for concurrent use.
type Closures[Out any] struct {
	task Task[func(context.Context) (Out, error), Out]
}

// NewClosures returns the runner of closures named name: their runs count
// under name in Stats.Tasks, the pprof label task= and the metrics, as a
// registered task's do. It is cheap, and returns the same runner for the
// same name and Out: keep it in a variable, or call it where you run. Any
// name is allowed (it is not a registered task's, and need not be unique
// against them). It panics on an empty name.
func NewClosures[Out any](name string) Closures[Out] {
	if name == "" {
		panic("pool: NewClosures with an empty name")
	}
	key := closureKey{name, reflect.TypeFor[Out]()}
	if d, ok := closureDefs.Load(key); ok {
		return Closures[Out]{task: Task[func(context.Context) (Out, error), Out]{def: d.(*taskDef[func(context.Context) (Out, error), Out])}}
	}
	def := &taskDef[func(context.Context) (Out, error), Out]{
		name:     name,
		fn:       func(ctx context.Context, fn func(context.Context) (Out, error)) (Out, error) { return fn(ctx) },
		index:    -1, // not in the registry: see Pool.recycled
		holdsOut: shmbuf.CanHold(reflect.TypeFor[Out]()),
		labels:   prof.New(name, InProcess.String()),
	}
	d, _ := closureDefs.LoadOrStore(key, def)
	return Closures[Out]{task: Task[func(context.Context) (Out, error), Out]{def: d.(*taskDef[func(context.Context) (Out, error), Out])}}
}

// funcClosure is NewClosures[Out](FuncName), found by Out's type alone: a
// cheaper key than a name and a type, on RunFunc's path.
func funcClosure[Out any]() Closures[Out] {
	if d, ok := funcDefs.Load(reflect.TypeFor[Out]()); ok {
		return d.(Closures[Out])
	}
	c := NewClosures[Out](FuncName)
	funcDefs.Store(reflect.TypeFor[Out](), c)
	return c
}

var funcDefs sync.Map // reflect.Type of Out -> Closures[Out] named FuncName

// closureDefs holds each closure name's definition, by name and Out type.
// It is package state beside the task registry, written on first use.
var closureDefs sync.Map // closureKey -> *taskDef[func(ctx) (Out, error), Out]

type closureKey struct {
	name string
	out  reflect.Type
}

// Run is RunFunc for c's closures.
func (c Closures[Out]) Run(ctx context.Context, p *Pool, fn func(context.Context) (Out, error)) (Out, error) {
	if err := c.check(p, fn); err != nil {
		var zero Out
		return zero, err
	}
	return Run(ctx, p, c.task, fn)
}

// Submit is SubmitFunc for c's closures.
func (c Closures[Out]) Submit(ctx context.Context, p *Pool, fn func(context.Context) (Out, error)) (*Future[Out], error) {
	if err := c.check(p, fn); err != nil {
		return nil, err
	}
	return Submit(ctx, p, c.task, fn)
}

// errNilFunc is the error of a nil closure.
var errNilFunc = fmt.Errorf("%w: a nil func", ErrUnknownTask)

// check refuses what Run and Submit would not: a nil fn, and any pool but
// an InProcess one, which it counts as a rejection. A pool not made by New
// is left to admission, which says so.
func (c Closures[Out]) check(p *Pool, fn func(context.Context) (Out, error)) error {
	if p.usable() != nil {
		return nil
	}
	switch {
	case fn == nil:
		p.stats.rejected.Add(1)
		return errNilFunc
	case p.transport != nil:
		p.stats.rejected.Add(1)
		return fmt.Errorf("pool: a closure can't run on a %v pool, whose tasks run in other processes: "+
			"register the task with pool.Register at package level and use Run or Submit", p.opts.Isolation)
	}
	return nil
}
