package pool

import (
	"context"

	"github.com/offloadgo/offload/internal/xfer"
)

// remote carries a Subprocess pool's tasks to worker processes: it encodes
// inputs and decodes outputs, and makes one runner per worker goroutine.
type remote interface {
	// encode turns a task's input that can't hold a *transfer.Buffer into
	// the call body for the worker process; it runs on the submitter's
	// goroutine, before admission.
	encode(task string, in any) ([]byte, error)
	// check is encode for an input that can hold Buffers, which is only
	// encoded at send time, by the Peer of the process it goes to: check
	// fails, before admission, for what could not be sent.
	check(task string, in any) error
	// newRunner returns the runner for the worker goroutine numbered id.
	newRunner(id int) runner
}

// events is what a runner tells its pool about its processes, instead of
// reaching into the pool's books.
type events interface {
	// terminated: a process was terminated (asked to cancel, killed after
	// the grace) because its task's caller gave up or the pool closed.
	terminated()
	// crashed: a process died on its own, under a task or while idle.
	crashed()
}

// message is one call as a runner sends it and reads its reply.
type message struct {
	task string
	// payload is the call body that encode made; nil when the input can
	// hold Buffers, which in is then, to encode with the process's Peer.
	payload []byte
	in      any
	// out points to the output to decode; outMoves says its type can
	// hold Buffers, so it is decoded with the process's Peer.
	out      any
	outMoves bool
	// handover is the call's hand-over state, which the runner moves
	// through send, reply or unsend (see handover).
	handover *handover
	// retake gives back, as a new input, the Buffers a call encoded with
	// in lent to a process that died without reading the call, so that
	// the call can go to another; nil when the input holds none.
	retake retaker
}

// retaker is a call whose input can hold Buffers: it decodes the input it
// sent, with the Peer it was sent with, to take its Buffers back.
type retaker interface {
	retake(peer xfer.Peer, data []byte) (in any, err error)
}

// runner is one worker goroutine's worker process. Only that goroutine
// calls its methods, without the pool's lock.
type runner interface {
	// warm starts the process ahead of the first task; a failure waits
	// for exchange to report it.
	warm()
	// exchange runs m's task in the process and decodes its output into
	// m.out. When ctx ends it terminates the task (grace, then kill) and
	// returns an error matching ErrTerminated; a process that dies under
	// the task yields ErrWorkerCrashed. A process that died before it took
	// the call (idle, or before it read the call whole) costs the call
	// nothing: the call goes to its replacement. ctx's end before the call
	// is sent returns ctx's cause, and nothing is sent.
	exchange(ctx context.Context, m message) error
	// close ends the process as the worker goroutine exits.
	close()
}
