package seam

import "errors"

// The errors transports report, which package pool exports as its own
// (pool.ErrTerminated is ErrTerminated): one value, matchable with
// errors.Is on either side of the seam.
var (
	// ErrQueueFull, from a runner, means it found no worker with room
	// within the call's MaxWait: nothing was sent.
	ErrQueueFull     = errors.New("pool: queue is full")
	ErrClosed        = errors.New("pool: closed")
	ErrTerminated    = errors.New("pool: task terminated")
	ErrWorkerCrashed = errors.New("pool: worker crashed")
	// ErrWorkerStartFailed is a worker that never came up for the call:
	// the call reached no worker, so nothing ran. It does not match
	// ErrWorkerCrashed, which says the task may have run.
	ErrWorkerStartFailed = errors.New("pool: worker did not start")
	ErrUnknownTask       = errors.New("pool: unknown task")
	ErrPayloadTooLarge   = errors.New("pool: payload too large")
	ErrGoexit            = errors.New("pool: task called runtime.Goexit")
	// ErrNodeLost is a worker node that stopped answering under a call
	// (killed, partitioned, stopped): a crash seen from afar, so it
	// matches ErrWorkerCrashed too.
	ErrNodeLost error = nodeLost{}
)

type nodeLost struct{}

func (nodeLost) Error() string        { return "pool: worker node lost" }
func (nodeLost) Is(target error) bool { return target == ErrWorkerCrashed }

// TaskError is a task's own error, reported by a worker elsewhere: only its
// message crosses, whether it was marked permanent (outcome.Failed), and
// from a program of another language the exception's type and traceback.
// Package pool hands it to the caller as a RemoteError.
type TaskError struct {
	Message, Type, Traceback string
	Permanent                bool
}

func (e *TaskError) Error() string {
	if e.Type == "" {
		return e.Message
	}
	return e.Type + ": " + e.Message
}

// Panic is a task's panic, reported by a worker elsewhere: its value as it
// crossed (see internal/codec) and the panicking goroutine's stack. Package
// pool hands it to the caller as a PanicError.
type Panic struct {
	Value any
	Stack []byte
}

func (e *Panic) Error() string { return "task panicked" }
