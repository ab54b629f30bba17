package pool

import (
	"context"
	"time"
)

// Tracer follows tasks across the boundary of a process or a node, and
// gives each task a span. The pool links no tracing library: package
// poolotel makes a Tracer over OpenTelemetry (W3C trace context and
// baggage). Set it in Options.Tracer on the side that submits, and in
// MainOptions on the side that runs tasks elsewhere (pool.Main in a
// Subprocess pool's worker processes, natsremote.Main on a worker node).
//
// Its methods are called on the caller's and the pool's goroutines, never
// under a lock of the pool, and must be safe for concurrent use. Like
// OnWorkerEvent, they must not panic: a TaskSpan's methods run on the
// pool's goroutines, where a panic ends the program. (Extract, which runs
// where the task does, is the exception: a panic there fails the task's
// call.)
type Tracer interface {
	// StartTask starts the span of one task as the pool takes it in, on
	// the submitter's goroutine: ctx is the caller's (ask its methods
	// outside any lock of the Tracer's: one that blocks blocks whoever
	// asks), and the context it returns (ctx with the span) is the one
	// whose values the task's context has. It is called for every submission that gets past the
	// submission's own checks (a nil ctx, an unregistered task, a ctx
	// ended already), admitted or not. A nil TaskSpan means the task has
	// none (its trace context is still sent).
	StartTask(ctx context.Context, task TaskInfo) (context.Context, TaskSpan)
	// Inject writes the trace context of ctx (the one StartTask returned)
	// into carrier, for a task that runs in a worker process or on a
	// node. The carrier is sent with the call; encoded, it must fit in
	// 10 KiB or the submission fails with ErrPayloadTooLarge.
	Inject(ctx context.Context, carrier map[string]string)
	// Extract returns ctx with the trace context that carrier holds: the
	// worker process's or the node's side, before the task runs.
	Extract(ctx context.Context, carrier map[string]string) context.Context
}

// TaskInfo names the task a span is for.
type TaskInfo struct {
	Name      string
	Isolation Isolation // of the pool that runs it
}

// TaskSpan is one task's span as a Tracer records it. The pool calls
// Dequeued at most once, then End exactly once.
type TaskSpan interface {
	// Dequeued says that a worker took the task after it waited for one
	// for waited (a Remote pool's worker may wait for a node's free slot
	// after this). It is not called for a task that never ran.
	Dequeued(waited time.Duration)
	// End ends the span with the task's outcome: err is nil for a result,
	// else the error its caller got (the task's own, a *PanicError,
	// ErrQueueFull for a rejection, ctx's error, ErrTerminated, ...). It
	// is called before the caller of a task that ran hears of its end; a
	// task that never ran (rejected, or gone from the queue) may have it
	// called just after.
	End(err error)
}

// MainOptions configure Main, the side of a worker process (and, through
// natsremote.Main, of a worker node).
type MainOptions struct {
	// Tracer, if set, gives each task the trace context its caller's pool
	// sent with it (see Tracer.Extract), so that the task's ctx continues
	// the caller's trace. nil means tasks run without one: the carrier
	// that comes with a call is not read.
	Tracer Tracer
}

// mainOptions is the one MainOptions a Main was given, or the zero one.
func mainOptions(opts []MainOptions) MainOptions {
	switch len(opts) {
	case 0:
		return MainOptions{}
	case 1:
		return opts[0]
	}
	panic("pool: Main takes at most one MainOptions")
}

// extractor is what a worker process needs of o: the Tracer's Extract, or
// nil.
func (o MainOptions) extractor() func(context.Context, map[string]string) context.Context {
	if o.Tracer == nil {
		return nil
	}
	return o.Tracer.Extract
}
