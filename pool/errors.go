package pool

import (
	"errors"
	"fmt"

	"github.com/offloadgo/offload/cancel"
	"github.com/offloadgo/offload/internal/seam"
)

// The errors a Pool returns. All are matchable with errors.Is; the ones a
// task's caller sees may wrap more detail (the context error, a crash
// account) around them.
var (
	// ErrQueueFull is returned at once by Submit and Run when Workers tasks
	// are running and MaxQueue are waiting: the caller should shed the work
	// (for HTTP, answer 503) rather than wait. QueueDelay's drops match
	// it too.
	ErrQueueFull = errQueueFull()
	// ErrClosed is returned for work submitted after Shutdown or Close, and
	// for queued work that Close (or an expired Shutdown) dropped.
	ErrClosed = errClosed()
	// ErrTerminated means a task was running in a worker process (or on a
	// node) when its caller gave up or the pool closed under it: it was
	// told to stop, and its process is killed if it does not return within
	// TerminateGrace. The caller gets it at once, without waiting to learn
	// which; its error matches the ctx's error (or ErrClosed) too. Only a
	// kill counts in Stats.Terminated; a task a Remote pool's caller gave
	// up on while it ran on its node counts in Stats.CanceledOnNode.
	ErrTerminated = errTerminated()
	// ErrWorkerCrashed means the worker died under the task, which may
	// have run. A Subprocess pool's error carries a *cancel.Exit
	// (errors.As) with the exit status or signal and the tail of the
	// worker's stderr, which its message shows. A Remote pool's carries no
	// *cancel.Exit: its message names the node and gives the node's
	// account of its worker's end; a node lost under the task fails it
	// with ErrNodeLost, which matches ErrWorkerCrashed.
	ErrWorkerCrashed = errWorkerCrashed()
	// ErrWorkerStartFailed means the worker process the task waited for
	// (here, or on a Remote pool's node) did not come up: it exited, or
	// sent no handshake within StartTimeout, before it could take the task. Nothing ran, so the
	// task may be retried; its message says how the start failed (most
	// often the binary's main does not call Main first). It does not
	// match ErrWorkerCrashed. After a failed start a Subprocess pool
	// starts no worker process for a while, 100 ms doubling with each
	// failure in a row up to 5 s, then tries one: a task that needs a
	// process meanwhile fails at once with the last start's error, its
	// message saying so and when the next start is tried. A start that
	// comes up, RecycleWorkers' included, ends the wait.
	ErrWorkerStartFailed = errWorkerStartFailed()
	// ErrNodeLost means a Remote pool's worker node stopped answering
	// while it ran the task (it was killed, partitioned or stopped): the
	// task may have run, or be running still. It matches ErrWorkerCrashed.
	ErrNodeLost = errNodeLost()
	// ErrUnknownTask means the task was never registered (or, for a worker
	// process, was not registered at package level, so the worker lacks it).
	ErrUnknownTask = errUnknownTask()
	// ErrPayloadTooLarge means a task's encoded input or output is larger
	// than SubprocessOptions.MaxPayload.
	ErrPayloadTooLarge = errPayloadTooLarge()
	// ErrGoexit means the task called runtime.Goexit (t.FailNow in a test
	// helper, say) instead of returning: it has no result. The pool
	// replaces the goroutine it ended and goes on.
	ErrGoexit = errGoexit()
	// ErrInvalidWorkers is SetWorkers' error for a worker count below 1.
	ErrInvalidWorkers = errors.New("pool: invalid number of workers")
)

// The sentinels are the seam's (internal/seam), one value on either
// side of it, so that errors.Is matches what a transport returns; each is
// read through a function so that go doc shows this package's names only,
// as io/fs does.
func errQueueFull() error         { return seam.ErrQueueFull }
func errClosed() error            { return seam.ErrClosed }
func errTerminated() error        { return seam.ErrTerminated }
func errWorkerCrashed() error     { return seam.ErrWorkerCrashed }
func errNodeLost() error          { return seam.ErrNodeLost }
func errWorkerStartFailed() error { return seam.ErrWorkerStartFailed }
func errUnknownTask() error       { return seam.ErrUnknownTask }
func errPayloadTooLarge() error   { return seam.ErrPayloadTooLarge }
func errGoexit() error            { return seam.ErrGoexit }

// RemoteError is the error a task returned in a worker process (a
// Subprocess pool's, or on a Remote pool's node), or the exception an
// Extern task raised in its program. Errors don't cross a process
// boundary, so errors.Is can't match the worker's sentinels; Message is
// the original error's text, and Error returns it unchanged for a Go
// task. An Extern task's exception also has its Type (the exception's
// class, "Error" when the program names none) and its Traceback as the
// program's language prints it; Error returns "Type: Message".
type RemoteError struct {
	Task      string // the registered name of the task
	Message   string // the task's err.Error(), or the exception's message
	Type      string // the exception's type; "" for a Go task
	Traceback string // the exception's traceback; "" for a Go task

	permanent bool
}

// Permanent reports whether the task's error was marked, where it ran, as
// not worth trying again: an error with a method Permanent() bool that
// says true, as natsjobs.Permanent makes. It lets the mark cross a
// process boundary, which the error's own type does not.
func (e *RemoteError) Permanent() bool { return e.permanent }

func (e *RemoteError) Error() string {
	if e.Type == "" {
		return e.Message
	}
	return e.Type + ": " + e.Message
}

// Errors for calls that can't be served at all: programming errors, which
// callers need not match.
var (
	errNilContext = errors.New("pool: nil Context (use context.Background() or a request's context)")
	errNotNew     = errors.New("pool: the *Pool is nil or was not made by pool.New")
	errNilFuture  = errors.New("pool: Wait on a nil *Future (Submit returned an error)")
)

// PanicError is the error a task's caller gets when the task panicked. The
// worker recovers and goes on serving.
//
// In process, Value is the value passed to panic. From a worker process
// (Subprocess, Remote) it is as close as a process boundary allows: a
// string is the string; an error is a *RemoteError with its message, so
// Unwrap still finds an error but errors.Is can't match the worker's
// sentinels; another value is what msgpack decodes it into (int64,
// float64, []any, map[string]any …, or its own type if registered with
// msgpack.RegisterExt); a value msgpack can't encode is its fmt.Sprint
// text.
type PanicError struct {
	Task  string // the registered name of the task
	Value any    // the panic value; see above for another process's
	Stack []byte // the panicking goroutine's stack, as runtime/debug.Stack
}

func (e *PanicError) Error() string {
	return fmt.Sprintf("pool: task %q panicked: %v\n\n%s", e.Task, e.Value, e.Stack)
}

// Unwrap returns the panic value when it is an error, so that errors.Is and
// errors.As see through a panic(err).
func (e *PanicError) Unwrap() error {
	err, _ := e.Value.(error)
	return err
}

// withCause returns an error that errors.Is both sentinel and cause: a
// terminated task's error also matches its ctx's error.
var withCause = cancel.WithCause
