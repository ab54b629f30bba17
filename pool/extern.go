package pool

import (
	"fmt"
	"reflect"

	"github.com/offloadgo/offload/internal/blobjson"
	"github.com/offloadgo/offload/internal/prof"
	"github.com/offloadgo/offload/internal/registry"
	"github.com/offloadgo/offload/internal/shmbuf"
)

// Extern declares the task name, with its input and output types, that a
// program of another language serves: a Subprocess pool whose
// SubprocessOptions.Command is that program runs it, in the program's
// processes (sdk/ has a Python and a Node library for the program's side,
// and PROTOCOL.md, what any program must speak). Extern shares Register's
// names: a name declared by both panics. Call it at package level.
//
// A Remote pool runs it on the worker nodes whose own pool is such a
// Subprocess pool (see package natsremote): a node serves the names its
// program's hello lists, whatever its binary declares, and passes the
// JSON and the blob on to the program and back undecoded. No fingerprint
// of In and Out crosses, since the node has no Go types to compare: an
// output whose JSON does not fit Out fails the call with an error naming
// the task, as on a local pool of the program.
//
// On an InProcess pool or a Subprocess pool of this binary, Run and
// Submit fail at once with an error matching ErrUnknownTask, and nothing
// runs; and a Go task (Register) fails so on a pool with a Command.
//
// In and Out cross as JSON, as encoding/json writes and reads them, on
// every hop. One []byte field of In or Out (a struct, or a pointer to
// one), tagged `offload:"blob"`, travels as raw bytes beside the JSON,
// without base64: the program finds those bytes in its input under that
// field's JSON name, and returns bytes the same way. An exception the
// program raises reaches the caller as a *RemoteError with its Type,
// Message and Traceback, from a node too. Extern panics if In or Out
// tags more than one field, tags a field that is not []byte, or can hold
// a *transfer.Buffer, which only Go workers take: those are programming
// errors found at start-up.
func Extern[In, Out any](name string) Task[In, Out] {
	if name == "" {
		panic("pool: Extern with an empty task name")
	}
	in, out := reflect.TypeFor[In](), reflect.TypeFor[Out]()
	for _, side := range []struct {
		name string
		t    reflect.Type
	}{{"In", in}, {"Out", out}} {
		if _, err := blobjson.FieldOf(side.t); err != nil {
			panic(fmt.Sprintf("pool: Extern(%q): %s: %v", name, side.name, err))
		}
		if shmbuf.CanHold(side.t) {
			panic(fmt.Sprintf("pool: Extern(%q): %s type %v can hold a *transfer.Buffer, which a program of another language can't take; "+
				"send bytes in a []byte field tagged `offload:\"blob\"`", name, side.name, side.t))
		}
	}
	t := Task[In, Out]{def: &taskDef[In, Out]{
		name:   name,
		extern: true,
		unfit:  externUnfitness(name),
		labels: prof.New(name, Subprocess.String()),
	}}
	index, err := registry.Add(registry.Entry{Name: name, Submit: t.submitAny})
	if err != nil {
		panic("pool: " + err.Error())
	}
	t.def.index = index
	return t
}

// externUnfitness refuses an Extern task where no program runs it: in
// this binary's goroutines or processes. A Remote pool's nodes may run
// one (each says whether it does).
func externUnfitness(name string) unfitness {
	var u unfitness
	for pl, where := range map[placement]string{
		inGoroutine: "an InProcess pool",
		inProcess:   "a Subprocess pool of this binary (no Command)",
	} {
		u[pl] = fmt.Errorf("%w: task %q is declared with Extern: a program of another language serves it, "+
			"on a Subprocess pool whose Command is that program (or a Remote pool's nodes of one), not on %s", ErrUnknownTask, name, where)
	}
	return u
}
