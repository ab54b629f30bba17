package pool

import (
	"errors"
	"fmt"

	"github.com/offloadgo/offload/cancel"
)

// The errors a Pool returns. All are matchable with errors.Is; the ones a
// task's caller sees may wrap more detail (the context error, a crash
// account) around them.
var (
	// ErrQueueFull is returned at once by Submit and Run when Workers tasks
	// are running and MaxQueue are waiting: the caller should shed the work
	// (for HTTP, answer 503) rather than wait.
	ErrQueueFull = errors.New("pool: queue is full")
	// ErrClosed is returned for work submitted after Shutdown or Close, and
	// for queued work that Close (or an expired Shutdown) dropped.
	ErrClosed = errors.New("pool: closed")
	// ErrTerminated means a running task was stopped from outside: its
	// worker process was killed, or the pool was closed under it.
	ErrTerminated = errors.New("pool: task terminated")
	// ErrWorkerCrashed means the worker process died under the task; the
	// error's message carries the exit status or signal and the tail of the
	// worker's stderr.
	ErrWorkerCrashed = errors.New("pool: worker crashed")
	// ErrUnknownTask means the task was never registered (or, for a worker
	// process, was not registered at package level, so the worker lacks it).
	ErrUnknownTask = errors.New("pool: unknown task")
	// ErrPayloadTooLarge means a task's encoded input or output is larger
	// than SubprocessOptions.MaxPayload.
	ErrPayloadTooLarge = errors.New("pool: payload too large")
	// ErrGoexit means the task called runtime.Goexit (t.FailNow in a test
	// helper, say) instead of returning: it has no result. The pool
	// replaces the goroutine it ended and goes on.
	ErrGoexit = errors.New("pool: task called runtime.Goexit")
)

// Errors for calls that can't be served at all: programming errors, which
// callers need not match.
var (
	errNilContext = errors.New("pool: nil Context (use context.Background() or a request's context)")
	errNotNew     = errors.New("pool: the *Pool is nil or was not made by pool.New")
	errNilFuture  = errors.New("pool: Wait on a nil *Future (Submit returned an error)")
)

// PanicError is the error a task's caller gets when the task panicked. The
// worker recovers and goes on serving.
type PanicError struct {
	Task  string // the registered name of the task
	Value any    // the value passed to panic
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
