package natsjobs_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/internal/testkit"
	"github.com/offloadgo/offload/natsjobs"
	"github.com/offloadgo/offload/pool"
)

// traceKey holds a fake trace context in a ctx.
type traceKey struct{}

// fakeTracer carries the string under traceKey as its trace context,
// with pad bytes of baggage.
type fakeTracer struct{ pad int }

func (fakeTracer) StartTask(ctx context.Context, _ pool.TaskInfo) (context.Context, pool.TaskSpan) {
	return ctx, nil
}

func (f fakeTracer) Inject(ctx context.Context, carrier map[string]string) {
	if v, ok := ctx.Value(traceKey{}).(string); ok {
		carrier["trace"] = v
	}
	if f.pad > 0 {
		carrier["baggage"] = strings.Repeat("b", f.pad)
	}
}

func (fakeTracer) Extract(ctx context.Context, carrier map[string]string) context.Context {
	return context.WithValue(ctx, traceKey{}, carrier["trace"])
}

// traceIn is the fake trace context ctx has ("" for none).
func traceIn(ctx context.Context) string {
	v, _ := ctx.Value(traceKey{}).(string)
	return v
}

// traceOf answers with the trace context its ctx has.
var traceOf = pool.Register("natsjobs.traceof", func(ctx context.Context, _ struct{}) (string, error) {
	return traceIn(ctx), nil
})

// traceSecond fails for good on its first run for a key, and answers
// with its ctx's trace context after.
var traceSecond = pool.Register("natsjobs.tracesecond", func(ctx context.Context, in Keyed) (string, error) {
	if ran(in.Key) == 1 {
		return "", natsjobs.Permanent(errors.New("not yet"))
	}
	return traceIn(ctx), nil
})

// The enqueuer's trace context is stored with the job and reaches the
// task's ctx through the queue's Tracer.
func TestEnqueuersTraceReachesTheTask(t *testing.T) {
	t.Parallel()
	q, _ := startQueue(t, natsjobs.Options{Tracer: fakeTracer{}})
	serve(t, q, newPool(t, pool.Options{Workers: 1}), natsjobs.ServeOptions{})
	ctx := testkit.Ctx(t)
	id, err := natsjobs.Enqueue(context.WithValue(ctx, traceKey{}, "trace-42"), q, traceOf, struct{}{})
	require.NoError(t, err)
	out, err := natsjobs.Wait(ctx, q, traceOf, id)
	require.NoError(t, err)
	assert.Equal(t, "trace-42", out)
}

// A trace context too large to store fails the Enqueue, as it fails a
// call, and stores nothing: neither the job nor its Key.
func TestTooLargeATraceContextStoresNoJob(t *testing.T) {
	t.Parallel()
	q, nc := startQueue(t, natsjobs.Options{Tracer: fakeTracer{pad: 11 << 10}})
	ctx := testkit.Ctx(t)
	_, err := natsjobs.Enqueue(ctx, q, traceOf, struct{}{}, natsjobs.Key("k"))
	require.ErrorIs(t, err, pool.ErrPayloadTooLarge)
	assert.ErrorContains(t, err, "natsjobs: enqueue task \"natsjobs.traceof\": the trace context is")
	st, err := q.Stats(ctx)
	require.NoError(t, err)
	assert.Zero(t, st.Depth)
	assert.Empty(t, st.Tasks, "nothing counted")

	q2 := open(t, nc, natsjobs.Options{})
	_, err = natsjobs.Enqueue(ctx, q2, traceOf, struct{}{}, natsjobs.Key("k"))
	require.NoError(t, err, "the key names no job")
	st, err = q2.Stats(ctx)
	require.NoError(t, err)
	assert.Equal(t, 1, st.Depth)
}

// A dead job keeps its enqueuer's trace context: run again by Retry, it
// runs in the same trace.
func TestRetriedJobKeepsItsTrace(t *testing.T) {
	t.Parallel()
	q, _ := startQueue(t, natsjobs.Options{Tracer: fakeTracer{}})
	serve(t, q, newPool(t, pool.Options{Workers: 1}), natsjobs.ServeOptions{})
	ctx := testkit.Ctx(t)
	id, err := natsjobs.Enqueue(context.WithValue(ctx, traceKey{}, "trace-7"), q, traceSecond, Keyed{Key: key(t)})
	require.NoError(t, err)
	waitDead(ctx, t, q, traceSecond, id)
	require.NoError(t, q.Retry(ctx, id))
	out, err := natsjobs.Wait(ctx, q, traceSecond, id)
	require.NoError(t, err)
	assert.Equal(t, "trace-7", out)
}
