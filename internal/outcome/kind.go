// Package outcome is what a call to a task can end as, whichever
// transport carried it: the one list a reader consults, and the one
// mapping from each end to the error the caller gets.
//
// A worker reports a call's end as an Outcome: its Kind and a body.
// Each transport puts the Kind on its own wire as a byte of its own (one
// table per transport, pinned by its tests), and the caller's side turns
// the Outcome back into the task's output or its error with Err. A
// transport's protocol may carry more kinds (admission answers such as a
// node's "full"); those say a call was not taken, not how it ended, and
// stay the transport's.
package outcome

import "strconv"

// Kind is how a call ended. The zero Kind is none: a transport whose wire
// byte has no Kind reports an answer it does not know.
type Kind uint8

const (
	// Result: the task returned nil. Body: the output's encoding.
	Result Kind = iota + 1
	// Error: the task returned an error, or its input would not decode,
	// or its output would not encode. Body: the message. The caller gets
	// a *seam.TaskError (pool.RemoteError).
	Error
	// Panic: the task panicked. Body: codec.EncodePanic of the value and
	// the stack. The caller gets a *seam.Panic (pool.PanicError).
	Panic
	// Goexit: the task called runtime.Goexit instead of returning. No
	// body. The caller gets ErrGoexit.
	Goexit
	// TooLarge: the output is over the limit of where it must travel.
	// Body: the account. The caller gets ErrPayloadTooLarge.
	TooLarge
	// Unknown: the worker lacks the task; nothing ran. Body: why. The
	// caller gets ErrUnknownTask.
	Unknown
	// Crashed: the worker process died under the task, which may have
	// run. Body: its account. The caller gets ErrWorkerCrashed.
	Crashed
	// NotStarted: the worker process for the call did not start; nothing
	// ran. Body: the account of the failed start. The caller gets
	// ErrWorkerStartFailed.
	NotStarted
	// Ended: the task's ctx ended where it ran before the task returned
	// (its deadline passed there, or it was cancelled). Body: one byte,
	// the transport's cause code (see Where.Cause). The caller gets
	// ErrTerminated matching that cause.
	Ended
	// Lost: the worker node shut down under the task. Body: a message.
	// The caller gets ErrNodeLost.
	Lost
	// Raised: a task in a program of another language raised (threw) an
	// exception. Body: the JSON object {"type", "message", "traceback"}
	// (see Raise). The caller gets a *seam.TaskError with all three.
	Raised
	// Permanent: the task returned an error marked as not worth trying
	// again (see Failed). Body: the message. The caller gets a
	// *seam.TaskError with Permanent set.
	Permanent

	// numKinds bounds the Kinds, for tables indexed by Kind.
	numKinds
)

var kindNames = [numKinds]string{
	Result:     "result",
	Error:      "error",
	Panic:      "panic",
	Goexit:     "goexit",
	TooLarge:   "too large",
	Unknown:    "unknown task",
	Crashed:    "crashed",
	NotStarted: "not started",
	Ended:      "ended",
	Lost:       "lost",
	Raised:     "raised",
	Permanent:  "permanent",
}

// Kinds lists every Kind, in order.
func Kinds() []Kind {
	ks := make([]Kind, 0, numKinds-1)
	for k := Result; k < numKinds; k++ {
		ks = append(ks, k)
	}
	return ks
}

// Valid reports whether k is one of the Kinds (not zero, not past the
// last).
func (k Kind) Valid() bool { return k >= Result && k < numKinds }

func (k Kind) String() string {
	if k.Valid() {
		return kindNames[k]
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}
