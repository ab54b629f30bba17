package poolotel

import (
	"context"
	"errors"
	"sync"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/offloadgo/offload/pool"
)

// TracerOptions configure NewTracer. The zero value is valid.
type TracerOptions struct {
	// TracerProvider makes the tasks' spans. nil means the global one
	// (otel.GetTracerProvider), which follows otel.SetTracerProvider even
	// if it is called later.
	TracerProvider trace.TracerProvider
	// Propagator carries the trace context to worker processes and nodes.
	// nil means W3C trace context and baggage (propagation.TraceContext{}
	// and propagation.Baggage{}), whatever the global propagator is: the
	// worker side needs no global registration.
	Propagator propagation.TextMapPropagator
}

// ScopeName is the instrumentation scope of the tasks' spans.
const ScopeName = "github.com/offloadgo/offload/poolotel"

// NewTracer returns a pool.Tracer over OpenTelemetry, for
// pool.Options.Tracer on the calling side and pool.MainOptions (pool.Main,
// natsremote.Main) on the side that runs tasks elsewhere:
//
//	tracer := poolotel.NewTracer(poolotel.TracerOptions{})
//	pool.Main(pool.MainOptions{Tracer: tracer})
//	p, err := pool.New(pool.Options{Isolation: pool.Subprocess, Tracer: tracer})
//
// Each task gets a span named "offload.task NAME", a child of the span in
// the caller's ctx (SpanKind Client for a task that leaves the process,
// Internal in process) with the attributes offload.task and
// offload.isolation; the event offload.dequeued when a worker takes it,
// with offload.queue.wait (seconds); and at its end the attribute
// offload.outcome (completed, failed, canceled, rejected, closed,
// terminated, crashed, or not started: its worker process never came up)
// and, unless it completed, the status Error with
// the error's text. Inside the task, wherever it runs,
// trace.SpanContextFromContext(ctx) has the caller's trace ID, and
// baggage.FromContext(ctx) the caller's baggage. The Tracer is safe for
// concurrent use.
//
// It is also a pool.JobTracer, for natsjobs.Options.Tracer: each Enqueue
// gets a span "offload.job.enqueue TASK" (SpanKind Producer) whose trace
// context the job keeps, and each attempt to run it a span
// "offload.job.run TASK" (SpanKind Consumer) that continues it and links
// to it, with the attributes offload.queue, offload.task, offload.job.id
// (and offload.job.attempt) and, at its end, offload.outcome as above;
// the task's own span, and the task, run under the attempt's.
func NewTracer(o TracerOptions) pool.Tracer {
	if o.TracerProvider == nil {
		o.TracerProvider = otel.GetTracerProvider()
	}
	if o.Propagator == nil {
		o.Propagator = propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})
	}
	return &tracer{tracer: o.TracerProvider.Tracer(ScopeName), propagator: o.Propagator}
}

type tracer struct {
	tracer     trace.Tracer
	propagator propagation.TextMapPropagator
	// starts holds each task's span name and start options (a
	// *spanStart by pool.TaskInfo), made once rather than per task.
	starts sync.Map
}

// spanStart is how a task's spans start.
type spanStart struct {
	name    string
	options []trace.SpanStartOption
}

func (t *tracer) StartTask(ctx context.Context, task pool.TaskInfo) (context.Context, pool.TaskSpan) {
	start := t.spanStart(task)
	ctx, span := t.tracer.Start(ctx, start.name, start.options...)
	return ctx, taskSpan{span}
}

func (t *tracer) spanStart(task pool.TaskInfo) *spanStart {
	if s, ok := t.starts.Load(task); ok {
		return s.(*spanStart)
	}
	kind := trace.SpanKindClient
	if task.Isolation == pool.InProcess {
		kind = trace.SpanKindInternal
	}
	s, _ := t.starts.LoadOrStore(task, &spanStart{name: "offload.task " + task.Name, options: []trace.SpanStartOption{
		trace.WithSpanKind(kind),
		trace.WithAttributes(attribute.String("offload.task", task.Name), attribute.String("offload.isolation", task.Isolation.String())),
	}})
	return s.(*spanStart)
}

func (t *tracer) Inject(ctx context.Context, carrier map[string]string) {
	t.propagator.Inject(ctx, propagation.MapCarrier(carrier))
}

func (t *tracer) Extract(ctx context.Context, carrier map[string]string) context.Context {
	return t.propagator.Extract(ctx, propagation.MapCarrier(carrier))
}

// taskSpan is a task's span: trace.Span's own End takes options, not the
// task's error.
type taskSpan struct{ span trace.Span }

func (s taskSpan) Dequeued(waited time.Duration) {
	if !s.span.IsRecording() {
		return // sampled out, or a no-op provider: spare the event's making
	}
	s.span.AddEvent("offload.dequeued", trace.WithAttributes(attribute.Float64("offload.queue.wait", waited.Seconds())))
}

func (s taskSpan) End(err error) {
	if !s.span.IsRecording() {
		s.span.End()
		return
	}
	outcome := outcomeOf(err)
	s.span.SetAttributes(attribute.String("offload.outcome", outcome))
	if err != nil {
		s.span.SetStatus(codes.Error, err.Error())
	}
	s.span.End()
}

// outcomeOf names how a task ended for its caller, most specific first:
// a terminated task's error matches its ctx's too.
func outcomeOf(err error) string {
	switch {
	case err == nil:
		return "completed"
	case errors.Is(err, pool.ErrTerminated):
		return "terminated"
	case errors.Is(err, pool.ErrWorkerCrashed):
		return "crashed"
	case errors.Is(err, pool.ErrWorkerStartFailed):
		return "not started"
	case errors.Is(err, pool.ErrQueueFull):
		return "rejected"
	case errors.Is(err, pool.ErrClosed):
		return "closed"
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return "canceled"
	}
	return "failed"
}
