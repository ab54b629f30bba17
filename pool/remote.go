package pool

import "context"

// remote carries a Subprocess pool's tasks to worker processes: it encodes
// inputs and decodes outputs, and makes one runner per worker goroutine.
type remote interface {
	// encode turns a task's input into bytes for the worker process; it
	// runs on the submitter's goroutine, before admission.
	encode(task string, in any) ([]byte, error)
	// decode reads a task's output into out, on the worker goroutine.
	decode(task string, data []byte, out any) error
	// newRunner returns the runner for the worker goroutine numbered id.
	newRunner(id int) runner
}

// runner is one worker goroutine's worker process. Only that goroutine
// calls its methods, without the pool's lock.
type runner interface {
	// warm starts the process ahead of the first task; a failure waits
	// for exchange to report it.
	warm()
	// exchange runs the named task on payload in the process and returns
	// the encoded output. When ctx ends it terminates the task (grace,
	// then kill) and returns an error matching ErrTerminated; a process
	// that dies under the task yields ErrWorkerCrashed. A process that is
	// gone is replaced on the next call.
	exchange(ctx context.Context, task string, payload []byte) ([]byte, error)
	// close ends the process as the worker goroutine exits.
	close()
}
