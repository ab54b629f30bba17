package subproc

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/internal/codec"
	"github.com/offloadgo/offload/internal/workerproc"
)

// traceKey holds, in a task's ctx, the traceparent its call carried.
type traceKey struct{}

// extractTestTrace is a worker's Extract for these tests: the carrier's
// traceparent goes into ctx.
func extractTestTrace(ctx context.Context, carrier map[string]string) context.Context {
	return context.WithValue(ctx, traceKey{}, carrier["traceparent"])
}

// proc.internal.traceparent returns the traceparent its ctx holds.
var _ = register("proc.internal.traceparent", func(ctx context.Context, _ struct{}) (string, error) {
	v, _ := ctx.Value(traceKey{}).(string)
	return v, nil
})

// callTraced sends call id of proc.internal.traceparent with trace as its
// header's trace context, and returns the reply.
func callTraced(t *testing.T, parent *workerproc.Conn, id uint64, trace []byte) workerproc.Frame {
	t.Helper()
	writeCall(t, parent, id, "proc.internal.traceparent", trace)
	return readReply(t, parent, id)
}

// A worker with an Extract gives the task the trace context its call
// carries; a call that carries none runs as before, and a carrier that
// does not parse fails its call, with the reason, not the worker.
func TestServeExtractsTraceContext(t *testing.T) {
	t.Parallel()
	parent, code := startServeWith(t, extractTestTrace)
	_, err := parent.ReadFrame() // hello
	require.NoError(t, err)

	const tp = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	traced := codec.AppendCarrier(nil, map[string]string{"traceparent": tp, "baggage": "k=v"})
	assert.Equal(t, tp, replyString(t, callTraced(t, parent, 1, traced)))
	assert.Empty(t, replyString(t, callTraced(t, parent, 2, nil)), "no trace context: extract is not called")

	f := callTraced(t, parent, 3, []byte{1, 3, 'k'}) // one entry, its key cut short
	assert.Equal(t, kindError, f.Kind)
	assert.Contains(t, string(f.Body), "corrupt trace context")
	assert.Contains(t, string(f.Body), `"proc.internal.traceparent"`)
	assert.Equal(t, tp, replyString(t, callTraced(t, parent, 4, traced)), "the worker goes on")

	parent.Close()
	assert.Equal(t, 0, <-code)
}

// A worker without an Extract ignores the trace context a call carries
// (the pool's Tracer is set but Main was given none): the task runs
// without it, and a carrier it does not read can't fail the call.
func TestServeWithoutExtractIgnoresTraceContext(t *testing.T) {
	t.Parallel()
	parent, code := startServeWith(t, nil)
	_, err := parent.ReadFrame() // hello
	require.NoError(t, err)
	traced := codec.AppendCarrier(nil, map[string]string{"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"})
	assert.Empty(t, replyString(t, callTraced(t, parent, 1, traced)))
	assert.Empty(t, replyString(t, callTraced(t, parent, 2, []byte{1, 3, 'k'})))
	parent.Close()
	assert.Equal(t, 0, <-code)
}

// A worker whose Extract panics fails the call with the panic, and goes
// on serving.
func TestServeSurvivesAPanickingExtract(t *testing.T) {
	t.Parallel()
	parent, code := startServeWith(t, func(context.Context, map[string]string) context.Context { panic("extract boom") })
	_, err := parent.ReadFrame() // hello
	require.NoError(t, err)
	traced := codec.AppendCarrier(nil, map[string]string{"traceparent": "tp"})
	f := callTraced(t, parent, 1, traced)
	assert.Equal(t, kindError, f.Kind)
	assert.Contains(t, string(f.Body), "extract boom")
	assert.Empty(t, replyString(t, callTraced(t, parent, 2, nil)), "the worker goes on")
	parent.Close()
	assert.Equal(t, 0, <-code)
}
