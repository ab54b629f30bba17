package pool

import "context"

// JobTracer is a Tracer that also follows durable jobs (package
// natsjobs): a span for each Enqueue, whose trace context is stored with
// the job, and one for each attempt to run it, in that trace and linked
// to the enqueue's span. poolotel's Tracer is one. A Tracer that is not
// one still carries the enqueuer's trace context to the task (Inject and
// Extract), with no spans of the job's own.
//
// Like the Tracer's, its methods must be safe for concurrent use and
// must not panic.
type JobTracer interface {
	Tracer
	// StartEnqueue starts the span of an Enqueue, on the enqueuer's
	// goroutine, before the job is stored; the ctx it returns is the one
	// whose trace context Inject stores with the job. The span ends with
	// the Enqueue's error.
	StartEnqueue(ctx context.Context, job JobInfo) (context.Context, TaskSpan)
	// StartRun starts the span of one attempt, on the worker's side: ctx
	// holds the trace context stored with the job (Extract), which the
	// span continues and links to; the ctx it returns is the one the
	// attempt's task runs under. The span ends with the attempt's error.
	// Dequeued is not called on either span.
	StartRun(ctx context.Context, job JobInfo) (context.Context, TaskSpan)
}

// JobInfo names the job a span is for.
type JobInfo struct {
	Queue, Task, ID string
	// Attempt is the attempt's number, from 1 (StartRun); 0 for an
	// Enqueue.
	Attempt int
}
