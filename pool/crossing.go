package pool

import (
	"fmt"
	"reflect"
	"strconv"

	"github.com/offloadgo/offload/internal/codec"
	"github.com/offloadgo/offload/internal/shmbuf"
)

// A task's In and Out cross to a worker process or node as msgpack, which
// skips unexported fields: they would arrive zeroed, silently, on every
// call. Register looks at the types once (codec.FlawOf) and keeps the
// error each kind of crossing pool gives the task's submissions: a
// refusal at once, naming the type and the field, in place of data lost.

// placement is where a pool's tasks run, which decides the tasks it
// takes: a pool of this binary's workers runs Register's tasks, a pool
// whose Command is another program runs Extern's.
type placement uint8

const (
	inGoroutine placement = iota // InProcess
	inProcess                    // Subprocess, this binary
	inProgram                    // Subprocess with a Command
	onNode                       // Remote
	numPlacements
)

// placementOf is where a pool of options o runs its tasks.
func placementOf(o *Options) placement {
	switch {
	case o.Isolation == Remote:
		return onNode
	case o.Isolation == Subprocess && len(o.Subprocess.Command) > 0:
		return inProgram
	case o.Isolation == Subprocess:
		return inProcess
	}
	return inGoroutine
}

// unfitness is why a task can't run, by placement: nil where it can.
type unfitness [numPlacements]error

// unfitnessOf looks at the task name's types in and out: a Go task runs
// anywhere but in a program of another language.
func unfitnessOf(name string, in, out reflect.Type) unfitness {
	var u unfitness
	u[inProgram] = fmt.Errorf("%w: task %q is a Go task (Register); a pool whose Subprocess.Command is another program runs Extern tasks only", ErrUnknownTask, name)
	for _, side := range []struct {
		name string
		t    reflect.Type
	}{{"In", in}, {"Out", out}} {
		if f := codec.FlawOf(side.t); f != nil {
			u[inProcess] = unfitErr(name, side.name, side.t, f, Subprocess)
			u[onNode] = unfitErr(name, side.name, side.t, f, Remote)
			break
		}
	}
	return u
}

// on is u's error for a pool that runs its tasks at pl.
func (u unfitness) on(pl placement) error { return u[pl] }

// unfitErr says that the task's side ("In" or "Out") of type t, flawed as
// f says, can't cross to the workers of a pool of isolation iso.
func unfitErr(task, side string, t reflect.Type, f *codec.TypeFlaw, iso Isolation) error {
	msg := "pool: task " + strconv.Quote(task) + ": " + side + " type " + t.String()
	if f.Path != "" {
		what := f.Type.String()
		if f.Zeroed {
			what = "unexported"
		}
		msg += ": field " + f.Path + " (" + what + ")"
	}
	where := "a worker process"
	if iso == Remote {
		where = "a worker node"
	}
	switch {
	case f.Zeroed && side == "Out":
		msg += " would arrive zeroed from " + where
	case f.Zeroed && iso == Remote:
		msg += " would arrive zeroed on " + where
	case f.Zeroed:
		msg += " would arrive zeroed in " + where
	case side == "Out":
		msg += " can't cross from " + where + ": " + f.Why
	default:
		msg += " can't cross to " + where + ": " + f.Why
	}
	return &unfitError{msg: msg}
}

// unfitError is unfitErr's error: it matches transfer.ErrNotTransferable,
// the error of a value that can't cross a process boundary.
type unfitError struct{ msg string }

func (e *unfitError) Error() string { return e.msg }
func (e *unfitError) Unwrap() error { return shmbuf.ErrNotTransferable }

// unfitFor refuses c's task on a pool that runs its tasks at pl, if they
// can't run there or their types can't cross there intact.
func (c *call[In, Out]) unfitFor(pl placement) error { return c.def.unfit.on(pl) }
