package poolotel_test

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/baggage"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/offloadgo/offload/internal/remotetest"
	"github.com/offloadgo/offload/natsremote"
	"github.com/offloadgo/offload/natsremote/embedded"
	"github.com/offloadgo/offload/pool"
	"github.com/offloadgo/offload/poolotel"
)

// Seen is what a task sees of its ctx's trace, wherever it runs.
type Seen struct {
	TraceID, SpanID string
	Baggage         string // the member "user"
	PID             int
}

var traceSeen = pool.Register("poolotel.traceseen", func(ctx context.Context, _ struct{}) (Seen, error) {
	sc := trace.SpanContextFromContext(ctx)
	return Seen{TraceID: sc.TraceID().String(), SpanID: sc.SpanID().String(),
		Baggage: baggage.FromContext(ctx).Member("user").Value(), PID: os.Getpid()}, nil
})

// traced is a caller's side: a tracer provider that records into an
// in-memory exporter, the pool's Tracer over it, and a request's ctx with
// a span and baggage.
type traced struct {
	exporter *tracetest.InMemoryExporter
	tracer   pool.Tracer
	ctx      context.Context
	request  trace.SpanContext
}

func newTraced(t *testing.T) *traced {
	t.Helper()
	exporter := tracetest.NewInMemoryExporter()
	provider := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exporter))
	t.Cleanup(func() { _ = provider.Shutdown(context.Background()) })
	member, err := baggage.NewMember("user", "42")
	require.NoError(t, err)
	bag, err := baggage.New(member)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(baggage.ContextWithBaggage(context.Background(), bag), time.Minute)
	t.Cleanup(cancel)
	ctx, span := provider.Tracer("test").Start(ctx, "request")
	t.Cleanup(func() { span.End() })
	return &traced{exporter: exporter, tracer: poolotel.NewTracer(poolotel.TracerOptions{TracerProvider: provider}), ctx: ctx, request: span.SpanContext()}
}

// taskSpan returns the one ended span of a task named name.
func (tr *traced) taskSpan(t *testing.T, name string) tracetest.SpanStub {
	t.Helper()
	return tr.span(t, "offload.task "+name)
}

// checkTaskSpan checks a task span's place in the caller's trace, its
// queue-wait event and its outcome.
func (tr *traced) checkTaskSpan(t *testing.T, s tracetest.SpanStub, iso pool.Isolation, kind trace.SpanKind, outcome string) {
	t.Helper()
	assert.Equal(t, tr.request.TraceID(), s.SpanContext.TraceID())
	assert.Equal(t, tr.request.SpanID(), s.Parent.SpanID(), "a child of the caller's span")
	assert.Equal(t, kind, s.SpanKind)
	assert.Contains(t, s.Attributes, attribute.String("offload.isolation", iso.String()))
	assert.Contains(t, s.Attributes, attribute.String("offload.outcome", outcome))
	require.Len(t, s.Events, 1)
	assert.Equal(t, "offload.dequeued", s.Events[0].Name)
}

// In process, the task's ctx is its span's: the caller's trace, one span
// down; a failed task's span has the status Error.
func TestTracerInProcess(t *testing.T) {
	tr := newTraced(t)
	p := newPool(t, pool.Options{Workers: 1, Tracer: tr.tracer})

	seen, err := pool.Run(tr.ctx, p, traceSeen, struct{}{})
	require.NoError(t, err)
	s := tr.taskSpan(t, "poolotel.traceseen")
	tr.checkTaskSpan(t, s, pool.InProcess, trace.SpanKindInternal, "completed")
	assert.Equal(t, tr.request.TraceID().String(), seen.TraceID)
	assert.Equal(t, s.SpanContext.SpanID().String(), seen.SpanID, "the task runs in its span")
	assert.Equal(t, "42", seen.Baggage)
	assert.Equal(t, codes.Unset, s.Status.Code)

	_, err = pool.Run(tr.ctx, p, fail, 1)
	require.Error(t, err)
	s = tr.taskSpan(t, "poolotel.fail")
	tr.checkTaskSpan(t, s, pool.InProcess, trace.SpanKindInternal, "failed")
	assert.Equal(t, sdktrace.Status{Code: codes.Error, Description: "no"}, s.Status)
}

// In a worker process (this test binary, re-run: TestMain's natsremote.Main
// extracts) the task's ctx continues the caller's trace: the same trace
// ID, its span's ID as the remote parent, and the caller's baggage.
func TestTracerInAWorkerProcess(t *testing.T) {
	tr := newTraced(t)
	p := newPool(t, pool.Options{Workers: 1, Isolation: pool.Subprocess, Tracer: tr.tracer})

	seen, err := pool.Run(tr.ctx, p, traceSeen, struct{}{})
	require.NoError(t, err)
	assert.NotEqual(t, os.Getpid(), seen.PID, "it ran in a worker process")
	s := tr.taskSpan(t, "poolotel.traceseen")
	tr.checkTaskSpan(t, s, pool.Subprocess, trace.SpanKindClient, "completed")
	assert.Equal(t, tr.request.TraceID().String(), seen.TraceID)
	assert.Equal(t, s.SpanContext.SpanID().String(), seen.SpanID)
	assert.Equal(t, "42", seen.Baggage)

	_, err = pool.Run(tr.ctx, p, fail, 1)
	require.Error(t, err)
	tr.checkTaskSpan(t, tr.taskSpan(t, "poolotel.fail"), pool.Subprocess, trace.SpanKindClient, "failed")
}

// On a node process (this test binary as a node: TestMain's
// natsremote.Main), and in a worker process of that node, the task's ctx
// continues the caller's trace, with the caller's baggage.
func TestTracerOnANodeProcess(t *testing.T) {
	s, err := embedded.Start(embedded.Options{Listen: true})
	require.NoError(t, err)
	defer s.Shutdown()
	for _, isolation := range []string{"inprocess", "subprocess"} {
		t.Run(isolation, func(t *testing.T) {
			name := "trace-" + isolation
			node := startNode(t, s.ClientURL(), name, isolation)
			tr := newTraced(t)
			p := nodePool(t, s, name, tr.tracer)

			seen, err := pool.Run(tr.ctx, p, traceSeen, struct{}{})
			require.NoError(t, err)
			if isolation == "inprocess" {
				assert.Equal(t, node.Process.Pid, seen.PID, "it ran on the node")
			} else {
				assert.NotEqual(t, node.Process.Pid, seen.PID, "it ran in a worker process of the node")
			}
			span := tr.taskSpan(t, "poolotel.traceseen")
			tr.checkTaskSpan(t, span, pool.Remote, trace.SpanKindClient, "completed")
			assert.Equal(t, tr.request.TraceID().String(), seen.TraceID, "the caller's trace")
			assert.NotEqual(t, span.SpanContext.SpanID().String(), seen.SpanID, "under the node's own span")
			assert.Equal(t, "42", seen.Baggage)
		})
	}
}

// Without a Tracer nothing is carried: a task elsewhere sees neither the
// caller's trace nor its baggage (the worker side, which extracts, finds
// nothing: in a worker process the task has no trace; on the node, whose
// pool has a Tracer, a trace of the node's own), the caller's provider
// records no span, and the tasks run as ever.
func TestNoTracerCarriesNothing(t *testing.T) {
	s, err := embedded.Start(embedded.Options{Listen: true})
	require.NoError(t, err)
	defer s.Shutdown()
	startNode(t, s.ClientURL(), "untraced", "inprocess")
	tr := newTraced(t)
	sub := newPool(t, pool.Options{Workers: 1, Isolation: pool.Subprocess})
	remote := nodePool(t, s, "untraced", nil)

	seen, err := pool.Run(tr.ctx, sub, traceSeen, struct{}{})
	require.NoError(t, err)
	assert.NotEqual(t, os.Getpid(), seen.PID)
	assert.Equal(t, trace.TraceID{}.String(), seen.TraceID)
	assert.Empty(t, seen.Baggage)

	seen, err = pool.Run(tr.ctx, remote, traceSeen, struct{}{})
	require.NoError(t, err)
	assert.NotEqual(t, os.Getpid(), seen.PID)
	assert.NotEqual(t, tr.request.TraceID().String(), seen.TraceID)
	assert.NotEqual(t, trace.TraceID{}.String(), seen.TraceID, "the node's own trace")
	assert.Empty(t, seen.Baggage)
	assert.Empty(t, tr.exporter.GetSpans())
}

// nodeHarness is the harness of these tests' node processes and Remote pools.
var nodeHarness = remotetest.Harness{Heartbeat: 100 * time.Millisecond}

// startNode starts this test binary as a node process serving the pool
// named name, with one slot; it is killed and reaped when the test ends.
func startNode(t *testing.T, url, name, isolation string) *exec.Cmd {
	t.Helper()
	return nodeHarness.StartNode(t, url, name, "1", natsremote.EnvIsolation+"="+isolation).Cmd
}

// nodePool returns a Remote pool of the nodes serving name on s, once it
// sees one.
func nodePool(t *testing.T, s *embedded.Server, name string, tracer pool.Tracer) *pool.Pool {
	t.Helper()
	p := nodeHarness.RemotePool(t, remotetest.Connect(t, s), name, pool.Options{Workers: 1, Tracer: tracer})
	remotetest.WaitNodes(t, p, 1)
	return p
}
