package seam

import (
	"time"

	"github.com/offloadgo/offload/cancel"
)

// EventKind says what happened to a worker process or a node. Each kind
// is named for its subject, then what happened to it; the kinds without a
// subject are a worker process's.
type EventKind int

const (
	// Started: a process is up and has said hello (Took: how long).
	Started EventKind = iota + 1
	// StartFailed: a process did not come up (Err says why).
	StartFailed
	// Recycled: a process served its MaxTasksPerWorker, or was replaced
	// by a Renew (RecycleWorkers).
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

	// NodeJoined: a Remote pool's node was verified and takes calls.
	NodeJoined
	// NodeLeft: a node said it leaves (or was evicted, Err saying so).
	NodeLeft
	// NodeLost: a node went silent past the liveness bound, or is gone
	// (Err says how).
	NodeLost
	// NodeTaskCanceled: a call's caller gave up while it ran on its node,
	// and the node was told to cancel it.
	NodeTaskCanceled

	// KindsEnd follows the last kind: pool's own kinds start there (its
	// mirror test fails if a kind added here would take their numbers).
	KindsEnd
)

// Event is one thing that happened to a worker process or a node.
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
	// Err is why a start failed (StartFailed), or why a node left or was
	// lost (NodeLeft, NodeLost).
	Err error
}
