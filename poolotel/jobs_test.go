package poolotel_test

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/offloadgo/offload/internal/jobstest"
	"github.com/offloadgo/offload/natsjobs"
	"github.com/offloadgo/offload/pool"
	"github.com/offloadgo/offload/poolotel"
)

// A queue of durable jobs, read through a ManualReader: its depth and
// oldest job's age from the server, then the counts by task and run
// times of a job that succeeded, one retried then dead, one canceled.
func TestRegisterJobs(t *testing.T) {
	q := jobstest.Open(t, natsjobs.Options{})
	meter, reader := newMeter(t)
	reg, err := poolotel.RegisterJobs(meter, "reports", q)
	require.NoError(t, err)
	_, err = poolotel.RegisterJobs(meter, "nil", nil)
	require.Error(t, err)

	queueAttr := attribute.String("queue", "reports")
	task := func(name string) attribute.KeyValue { return attribute.String("task", name) }
	q.EnqueueThree(t)
	m := collect(t, reader)
	assert.Equal(t, 2.0, point(t, m["offload.jobs.depth"], queueAttr), "the canceled job left the stream")
	assert.Positive(t, point(t, m["offload.jobs.oldest"], queueAttr))
	assert.Equal(t, 1.0, point(t, m["offload.jobs.canceled"], queueAttr, task("jobstest.hold")))

	q.RunThree(t)
	m = collect(t, reader)
	for _, want := range []struct {
		task                                                  string
		enqueued, started, succeeded, retried, dead, canceled float64
	}{
		{"jobstest.echo", 1, 1, 1, 0, 0, 0},
		{"jobstest.fail", 1, 2, 0, 1, 1, 0},
		{"jobstest.hold", 1, 0, 0, 0, 0, 1},
	} {
		of := func(name string) float64 { return point(t, m["offload.jobs."+name], queueAttr, task(want.task)) }
		assert.Equal(t, want.enqueued, of("enqueued"), want.task)
		assert.Equal(t, want.started, of("started"), want.task)
		assert.Equal(t, want.succeeded, of("succeeded"), want.task)
		assert.Equal(t, want.retried, of("retried"), want.task)
		assert.Equal(t, want.dead, of("dead"), want.task)
		assert.Equal(t, want.canceled, of("canceled"), want.task)
	}
	for _, name := range []string{"jobstest.echo", "jobstest.fail"} {
		assert.Positive(t, point(t, m["offload.job.run.time.total"], queueAttr, task(name)), name)
		assert.Positive(t, point(t, m["offload.job.run.duration"], queueAttr, task(name), attribute.Float64("quantile", 1)), name)
	}

	require.NoError(t, reg.Unregister())
	_, reported := collect(t, reader)["offload.jobs.depth"]
	assert.False(t, reported, "nothing is observed after Unregister")
}

// A trace joined from an enqueue to the run in a worker process: the
// job keeps its enqueuer's trace context, its attempt's span continues
// it and links to the enqueue's span, and the task, in a worker process
// of a Subprocess pool (this test binary, re-run: TestMain's Main
// extracts), runs in that trace with the enqueuer's baggage.
func TestJobTraceFromEnqueueToAWorkerProcess(t *testing.T) {
	tr := newTraced(t)
	q := jobstest.Open(t, natsjobs.Options{Tracer: tr.tracer})
	p := newPool(t, pool.Options{Workers: 1, Isolation: pool.Subprocess, Tracer: tr.tracer, Logger: jobstest.Quiet})
	q.Serve(t, p)

	id, err := natsjobs.Enqueue(tr.ctx, q.Queue, traceSeen, struct{}{})
	require.NoError(t, err)
	seen, err := natsjobs.Wait(tr.ctx, q.Queue, traceSeen, id)
	require.NoError(t, err)
	assert.NotEqual(t, os.Getpid(), seen.PID, "it ran in a worker process")
	assert.Equal(t, tr.request.TraceID().String(), seen.TraceID, "in the enqueuer's trace")
	assert.Equal(t, "42", seen.Baggage, "with the enqueuer's baggage")

	enqueue := tr.span(t, "offload.job.enqueue poolotel.traceseen")
	run := tr.span(t, "offload.job.run poolotel.traceseen")
	task := tr.taskSpan(t, "poolotel.traceseen")
	assert.Equal(t, trace.SpanKindProducer, enqueue.SpanKind)
	assert.Equal(t, tr.request.SpanID(), enqueue.Parent.SpanID(), "the enqueue is the request's child")
	assert.Equal(t, trace.SpanKindConsumer, run.SpanKind)
	assert.Equal(t, enqueue.SpanContext.SpanID(), run.Parent.SpanID(), "the run continues the enqueue")
	assert.True(t, run.Parent.IsRemote(), "from the job's headers")
	require.Len(t, run.Links, 1)
	assert.Equal(t, enqueue.SpanContext.SpanID(), run.Links[0].SpanContext.SpanID(), "and links to it")
	assert.Contains(t, run.Attributes, attribute.String("offload.job.id", string(id)))
	assert.Contains(t, run.Attributes, attribute.Int("offload.job.attempt", 1))
	assert.Contains(t, run.Attributes, attribute.String("offload.outcome", "completed"))
	assert.Equal(t, run.SpanContext.SpanID(), task.Parent.SpanID(), "the pool's task span is the run's child")
	assert.Equal(t, task.SpanContext.SpanID().String(), seen.SpanID, "and the task runs in it, in the worker process")
}

// span returns the one ended span named name.
func (tr *traced) span(t *testing.T, name string) tracetest.SpanStub {
	t.Helper()
	var found []tracetest.SpanStub
	for _, s := range tr.exporter.GetSpans() {
		if s.Name == name {
			found = append(found, s)
		}
	}
	require.Len(t, found, 1, "one span %q", name)
	return found[0]
}
