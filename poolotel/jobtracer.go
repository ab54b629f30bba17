package poolotel

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/offloadgo/offload/pool"
)

// The Tracer NewTracer makes follows durable jobs too (natsjobs, given
// it in natsjobs.Options.Tracer): it is a pool.JobTracer.
var _ pool.JobTracer = (*tracer)(nil)

// StartEnqueue starts the span "offload.job.enqueue TASK" (SpanKind
// Producer), a child of the enqueuer's span, whose trace context the job
// keeps.
func (t *tracer) StartEnqueue(ctx context.Context, job pool.JobInfo) (context.Context, pool.TaskSpan) {
	ctx, span := t.tracer.Start(ctx, "offload.job.enqueue "+job.Task, trace.WithSpanKind(trace.SpanKindProducer),
		trace.WithAttributes(jobAttributes(job)...))
	return ctx, taskSpan{span}
}

// StartRun starts the span "offload.job.run TASK" (SpanKind Consumer) of
// one attempt: a child of the span whose context the job kept (its
// enqueue's), so that the run is in the enqueuer's trace, and linked to
// it, as OpenTelemetry's messaging conventions link a message's
// processing to its creation.
func (t *tracer) StartRun(ctx context.Context, job pool.JobInfo) (context.Context, pool.TaskSpan) {
	opts := []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindConsumer),
		trace.WithAttributes(append(jobAttributes(job), attribute.Int("offload.job.attempt", job.Attempt))...)}
	if enqueued := trace.SpanContextFromContext(ctx); enqueued.IsValid() {
		opts = append(opts, trace.WithLinks(trace.Link{SpanContext: enqueued}))
	}
	ctx, span := t.tracer.Start(ctx, "offload.job.run "+job.Task, opts...)
	return ctx, taskSpan{span}
}

func jobAttributes(job pool.JobInfo) []attribute.KeyValue {
	return []attribute.KeyValue{attribute.String("offload.queue", job.Queue), attribute.String("offload.task", job.Task),
		attribute.String("offload.job.id", job.ID)}
}
