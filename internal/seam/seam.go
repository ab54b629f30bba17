// Package seam declares what passes between package pool and the kinds
// of worker that run tasks outside its goroutines: worker processes
// (internal/subproc) and worker nodes on other machines (natsremote).
//
// The pool keeps admission, the queue, the workers' goroutines and the
// books; a Carrier carries one task at a time per worker goroutine to
// wherever it runs, through the Runner it makes for that goroutine, and
// reports what happened to its processes or nodes through Events rather
// than reaching into the pool. Whether a running task can be stopped from
// outside is the Carrier's to say, call by call, through the call's
// Handover.
package seam

import (
	"context"
	"log/slog"
	"time"

	"github.com/offloadgo/offload/internal/shmbuf"
)

// Carrier carries one pool's tasks. Its methods are safe for concurrent
// use.
type Carrier interface {
	// Encode turns a task's input into the call's payload on the
	// submitter's goroutine, before admission, so that a value that can't
	// cross fails at once and costs no slot; form says how (see Form). An
	// input of form Moves may instead be checked only and encoded at send
	// time (payload nil), by a transport that moves Buffers. trace is the
	// caller's trace context, encoded (codec.AppendCarrier), to send with
	// the call; nil for none. One over codec.MaxCarrier fails with
	// ErrPayloadTooLarge.
	Encode(task string, trace []byte, in any, form Form) (payload []byte, err error)
	// NewRunner returns the runner for the worker goroutine numbered id.
	NewRunner(id int) Runner
}

// Runner runs one worker goroutine's calls, one at a time. Only that
// goroutine calls its methods, without the pool's lock.
type Runner interface {
	// Warm prepares ahead of the first call (starts a process, say); a
	// failure waits for Exchange to report it.
	Warm()
	// Exchange runs c's task and decodes its output into c.Out. When ctx
	// ends before the call is sent it returns ctx's cause and sends
	// nothing; after, it stops the task where it runs (see Handover) and
	// returns an error matching ErrTerminated, possibly only once the task
	// has returned or been killed: the worker goroutine stays busy until
	// then (the caller has its answer from the pool already). A failure of the worker
	// under the call is ErrWorkerCrashed; one before the worker took the
	// call costs the call nothing and is retried elsewhere.
	Exchange(ctx context.Context, c *Call) error
	// Close ends what the runner holds as its worker goroutine exits.
	Close()
}

// Form is how a task's input or output is encoded to cross.
type Form uint8

const (
	// Msgpack (internal/codec): a Go task's value whose type can hold no
	// *transfer.Buffer.
	Msgpack Form = iota
	// Moves: msgpack, of a Go task's value whose type can hold a
	// *transfer.Buffer.
	Moves
	// JSON with one field's bytes beside it (internal/blobjson): a value
	// of a task a program of another language serves (pool.Extern), which
	// whoever carries it needs no Go type to pass on.
	JSON
)

// Program is a Carrier whose workers are a program of another language
// (a Subprocess pool's Command).
type Program interface {
	// Tasks names the tasks the program serves, as the hello of its
	// latest started worker listed them; if none has started yet, it
	// starts one to hear its hello (bounded by ctx), and returns why
	// that failed.
	Tasks(ctx context.Context) ([]string, error)
	// Serves reports whether the latest hello heard (see Tasks) listed
	// task; false before any was heard. It is cheap: an atomic load and
	// a map lookup.
	Serves(task string) bool
}

// Call is one task as a runner sends it and reads its reply. Nothing in it
// is tied to a codec: the payload is what the transport's Encode made.
type Call struct {
	Task string
	// Payload is the input Encode made; nil when the input can hold
	// Buffers and the transport encodes it at send time, from In.
	Payload []byte
	In      any
	// Trace is the trace context Encode was given, for a transport that
	// encodes the input at send time.
	Trace []byte
	// Out points to the output to decode; OutMoves says its type can hold
	// Buffers.
	Out      any
	OutMoves bool
	// JSON says the task is a program's (pool.Extern): its input was
	// encoded, and its output is decoded, in Form JSON.
	JSON bool
	// Handover is the call's hand-over state, shared with the caller's
	// side: the runner moves it through Send, Reply or Unsend.
	Handover *Handover
	// Retake gives back, as a new input, the Buffers the input lent to a
	// worker that died without reading the call, so that the call can go
	// to another; nil when the input holds none.
	Retake Retaker
	// Start hears when the task really starts, for a runner that waits
	// for room elsewhere first (a Remote pool's runner waits for a node
	// with a free slot): the pool counts the time before as waiting, not
	// running. The runner calls Started as it sends the call, again for
	// each node it tries; the last call counts. A runner that never calls
	// it leaves the start at the worker goroutine's pick-up.
	Start Starter
	// MaxWait bounds a runner's wait for a worker with room before it
	// sends the call (the pool's QueueDelay, less what the task waited in
	// the queue); 0 means as long as ctx allows. A runner that gives up
	// sends nothing and returns an error matching ErrQueueFull.
	MaxWait time.Duration
	// Queued is how long the task waited in the pool's queue before its
	// worker took it.
	Queued time.Duration
	// Deadline is the caller's ctx's deadline (zero for none), read on the
	// caller's goroutine: a runner never calls the caller's ctx methods,
	// which may panic or block, on the worker goroutine.
	Deadline time.Time
}

// Starter hears when a call starts where it runs.
type Starter interface{ Started() }

// Retaker is a call whose input can hold Buffers: it decodes the input it
// sent, with the Peer it was sent with, to take its Buffers back.
type Retaker interface {
	Retake(peer shmbuf.Peer, data []byte) (in any, err error)
}

// Events is what a transport tells its pool about the workers it keeps.
// Its methods are called from the transport's goroutines, never under the
// pool's lock nor under the transport's own; they must not block.
type Events interface {
	Event(Event)
	// MoreSlots says a SlotCounter's Slots grew (a node joined, or was
	// heard from again): the pool hands the new room to the callers
	// waiting for some.
	MoreSlots()
}

// Locator is a Runner that can say where its call runs now: the worker
// process's pid, or the node's ID; zeros when it runs nowhere yet. The
// pool calls Where from another goroutine than the runner's while a call
// runs, under its lock, to say where a slow task runs: it must be safe
// for that, and cheap (atomic loads).
type Locator interface {
	Where() (pid int, node string)
}

// Env is what a pool gives the transport it binds.
type Env struct {
	// Workers is how many calls the pool runs at once: one per worker
	// goroutine, each with its own Runner. It is the pool's Workers at
	// bind time; a Resizer hears of later changes.
	Workers int
	// Stop ends when the pool closes: a transport cuts waits short on it.
	Stop context.Context
	// Events receives what happens to the transport's workers.
	Events Events
	// Logger is the pool's logger (never nil).
	Logger *slog.Logger
}

// Resizer is a Carrier that sizes what it holds by the pool's Workers
// (Env.Workers): Resize tells it the pool's new Workers after
// Pool.SetWorkers, in the order they took effect, outside the pool's
// lock. It must not block.
type Resizer interface {
	Resize(workers int)
}
