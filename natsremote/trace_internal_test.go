package natsremote

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/offloadgo/offload/internal/codec"
	"github.com/offloadgo/offload/internal/registry"
	"github.com/offloadgo/offload/internal/seam"
	"github.com/offloadgo/offload/pool"
)

// traceKey holds, in a task's ctx, the traceparent its call carried.
type traceKey struct{}

// keyTracer extracts a carrier's traceparent into ctx; it makes no spans.
type keyTracer struct{}

func (keyTracer) StartTask(ctx context.Context, _ pool.TaskInfo) (context.Context, pool.TaskSpan) {
	return ctx, noSpan{}
}
func (keyTracer) Inject(ctx context.Context, carrier map[string]string) {}
func (keyTracer) Extract(ctx context.Context, carrier map[string]string) context.Context {
	return context.WithValue(ctx, traceKey{}, carrier["traceparent"])
}

type noSpan struct{}

func (noSpan) Dequeued(time.Duration) {}
func (noSpan) End(error)              {}

var _ = pool.Register("nri.traceparent", func(ctx context.Context, _ struct{}) (string, error) {
	v, _ := ctx.Value(traceKey{}).(string)
	return v, nil
})

// serveTracing runs a node for pool name on nc whose pool has tracer (nil
// for none), until the test ends, and returns its subject.
func serveTracing(t *testing.T, nc *nats.Conn, name string, tracer pool.Tracer) string {
	t.Helper()
	a := serveNodeWith(t, nc, name, pool.Options{Workers: 1, Tracer: tracer})
	return nodeSubject(name, a.name, a.suffix)
}

// A node whose pool has a Tracer gives a task the trace context its call
// carries; one whose carrier does not parse fails with the reason, and
// the node goes on. A node without a Tracer does not read the carrier.
func TestNodeExtractsTraceContext(t *testing.T) {
	t.Parallel()
	nc := conn(t)
	e, ok := registry.Lookup("nri.traceparent")
	require.True(t, ok)
	const tp = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	carrier := codec.AppendCarrier(nil, map[string]string{"traceparent": tp})
	corrupt := []byte{1, 3, 'k'}
	result := func(h header, body []byte) string {
		t.Helper()
		require.Equal(t, kindResult, h.kind, "%s", body)
		var s string
		require.NoError(t, msgpack.Unmarshal(body, &s))
		return s
	}

	traced := serveTracing(t, nc, "traced", keyTracer{})
	assert.Equal(t, tp, result(call(t, nc, traced, callHead{task: "nri.traceparent", fingerprint: e.Fingerprint, trace: carrier}, 0)))
	assert.Empty(t, result(call(t, nc, traced, callHead{task: "nri.traceparent", fingerprint: e.Fingerprint}, 0)))
	h, body := call(t, nc, traced, callHead{task: "nri.traceparent", fingerprint: e.Fingerprint, trace: corrupt}, 0)
	assert.Equal(t, kindError, h.kind)
	assert.Contains(t, string(body), "corrupt trace context")
	assert.Equal(t, tp, result(call(t, nc, traced, callHead{task: "nri.traceparent", fingerprint: e.Fingerprint, trace: carrier}, 0)),
		"the node goes on")

	untraced := serveTracing(t, nc, "untraced", nil)
	assert.Empty(t, result(call(t, nc, untraced, callHead{task: "nri.traceparent", fingerprint: e.Fingerprint, trace: carrier}, 0)))
	assert.Empty(t, result(call(t, nc, untraced, callHead{task: "nri.traceparent", fingerprint: e.Fingerprint, trace: corrupt}, 0)))
}

// The submitter writes the trace context it is given into the call's
// head, and refuses one over the limit before anything is sent.
func TestSubmitterSendsTraceContext(t *testing.T) {
	t.Parallel()
	s, _ := bind(t, conn(t), "encode")
	carrier := codec.AppendCarrier(nil, map[string]string{"traceparent": "tp", "baggage": "k=v"})
	for _, trace := range [][]byte{nil, carrier} {
		payload, err := s.Encode("nri.double", trace, 21, seam.Msgpack)
		require.NoError(t, err)
		_, body, err := parseHeader(payload)
		require.NoError(t, err)
		head, input, err := parseCallHead(body)
		require.NoError(t, err)
		assert.Equal(t, trace, head.trace)
		assert.Equal(t, "nri.double", head.task)
		var n int
		require.NoError(t, msgpack.Unmarshal(input, &n))
		assert.Equal(t, 21, n)
	}
	_, err := s.Encode("nri.double", make([]byte, maxTraceLen+1), 21, seam.Msgpack)
	require.ErrorIs(t, err, seam.ErrPayloadTooLarge)
}

// panicTracer's Extract panics.
type panicTracer struct{ keyTracer }

func (panicTracer) Extract(context.Context, map[string]string) context.Context { panic("extract boom") }

// A node whose Tracer's Extract panics fails that call with the panic,
// and goes on serving.
func TestNodeSurvivesAPanickingExtract(t *testing.T) {
	t.Parallel()
	nc := conn(t)
	e, ok := registry.Lookup("nri.traceparent")
	require.True(t, ok)
	subject := serveTracing(t, nc, "panicky", panicTracer{})
	carrier := codec.AppendCarrier(nil, map[string]string{"traceparent": "tp"})
	h, body := call(t, nc, subject, callHead{task: "nri.traceparent", fingerprint: e.Fingerprint, trace: carrier}, 0)
	assert.Equal(t, kindError, h.kind)
	assert.Contains(t, string(body), "extract boom")
	h, body = call(t, nc, subject, callHead{task: "nri.traceparent", fingerprint: e.Fingerprint}, 0)
	assert.Equal(t, kindResult, h.kind, "the node goes on: %s", body)
}
