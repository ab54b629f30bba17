package seam

import (
	"time"

	"github.com/offloadgo/offload/cancel"
)

// EventKind says what happened to a worker process (or node).
type EventKind int

// For a Remote pool's nodes: Started is a node that joined (its first
// advert), Crashed one lost (silent past the liveness bound), Retired one
// that left (said so), Terminated a call cancelled on its node.
const (
	// Started: a process is up and has said hello (Took: how long).
	Started EventKind = iota + 1
	// StartFailed: a process did not come up (Err says why).
	StartFailed
	// Recycled: a process served its MaxTasksPerWorker and is replaced.
	Recycled
	// Terminated: a process was killed because its task's caller gave up
	// or the pool closed, and the task did not return within the grace of
	// the cancel it was sent. A process whose task returned in time goes
	// on, and is not reported.
	Terminated
	// Crashed: a process died on its own, under a task or between tasks
	// (Exit says how).
	Crashed
	// Retired: a process was replaced because it broke its channel's
	// books (a reply it could not send, a call it could not read).
	Retired

	// KindsEnd follows the last kind: pool's own kinds start there (its
	// mirror test fails if a kind added here would take their numbers).
	KindsEnd
)

// Event is one thing that happened to a worker process.
type Event struct {
	Kind   EventKind
	Worker int // the pool's number for the worker goroutine
	PID    int // 0 if there was no process
	// Node is the node's name, for a Remote pool's events.
	Node string
	// Took is how long a start took (Started).
	Took time.Duration
	// Replacing says why the process a start replaces ended (Recycled,
	// Terminated, Crashed, Retired), or 0 for a first start (Started).
	Replacing EventKind
	// Exit is how the process ended, once it is reaped (Crashed); nil
	// otherwise.
	Exit *cancel.Exit
	// Err is why a start failed (StartFailed).
	Err error
}
