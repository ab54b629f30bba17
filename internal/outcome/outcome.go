package outcome

import (
	"errors"
	"strings"

	"github.com/offloadgo/offload/internal/codec"
	"github.com/offloadgo/offload/internal/seam"
)

// Outcome is a call's end as a worker reports it: its Kind, and the body
// that Kind carries (see each Kind). Body is not copied: an Outcome
// holding an output's encoding refers to the transport's buffer.
type Outcome struct {
	Kind Kind
	Body []byte
}

// Of returns an Outcome of kind k with body.
func Of(k Kind, body []byte) Outcome { return Outcome{Kind: k, Body: body} }

// Panicked is the Outcome of a task that panicked with value, on the
// goroutine whose stack is stack.
func Panicked(value any, stack []byte) Outcome {
	return Outcome{Kind: Panic, Body: codec.EncodePanic(value, stack)}
}

// OfError is the Outcome of a call whose error, as a pool reports it to
// the caller, is err. A pool's sentinel is its Kind, with err's text
// without the sentinel's as the account (the caller's side puts the
// sentinel back, once, in front: see Err); ErrGoexit is Goexit, with no
// body; ErrClosed is Lost, with no body, for the transport to say where.
// Any other error is Error with its text; ErrUnknownTask too, since a
// worker that had the task found it unknown further on. A task's panic
// and a worker's task error are types of package pool, which this
// package can't import: the caller of OfError checks for them first (see
// natsremote's node).
func OfError(err error) Outcome {
	for _, s := range sentinels {
		if errors.Is(err, s.err) {
			if s.kind == Goexit || s.kind == Lost {
				return Outcome{Kind: s.kind}
			}
			return Outcome{Kind: s.kind, Body: accountOf(err, s.err)}
		}
	}
	return Failed(err)
}

// Failed is the Outcome of a task that returned err: Permanent if err is
// marked as not worth trying again, Error otherwise, both with err's
// text. An error is so marked if it, or one it wraps, has a method
// Permanent() bool that says true (natsjobs.Permanent's errors, and a
// pool.RemoteError of one): a method, not a type, so that the mark
// crosses packages that can't import each other.
func Failed(err error) Outcome {
	var p interface{ Permanent() bool }
	if errors.As(err, &p) && p.Permanent() {
		return Outcome{Kind: Permanent, Body: []byte(err.Error())}
	}
	return Outcome{Kind: Error, Body: []byte(err.Error())}
}

// sentinels are the pool's errors that are Kinds of their own, in the
// order OfError tries them: a Goexit reported as a crash stays a Goexit.
var sentinels = []struct {
	err  error
	kind Kind
}{
	{seam.ErrGoexit, Goexit},
	{seam.ErrPayloadTooLarge, TooLarge},
	{seam.ErrWorkerCrashed, Crashed},
	{seam.ErrWorkerStartFailed, NotStarted},
	{seam.ErrClosed, Lost},
}

// accountOf is err's text without sentinel's, which the caller's side
// puts back in front.
func accountOf(err, sentinel error) []byte {
	return []byte(strings.TrimPrefix(err.Error(), sentinel.Error()+": "))
}
