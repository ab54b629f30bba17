package bench

import (
	"context"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/offloadgo/offload/pool"
	"github.com/offloadgo/offload/poolotel"
)

// workerTracer is the worker processes' and nodes' side (TestMain): it
// extracts the trace context a call carries, and gives a node's tasks no
// span, so that the Remote benchmarks' nodes work as they did without it.
var workerTracer = extractOnly{poolotel.NewTracer(poolotel.TracerOptions{TracerProvider: noop.NewTracerProvider()})}

type extractOnly struct{ pool.Tracer }

func (extractOnly) StartTask(ctx context.Context, _ pool.TaskInfo) (context.Context, pool.TaskSpan) {
	return ctx, nil
}

// BenchmarkTracedRun is BenchmarkSubprocessRoundTrip's Run of a trivial
// task, from a caller whose ctx has a sampled span, with the pool's
// Tracer: none; poolotel's over a no-op provider (no spans recorded; to a
// worker process, the trace context is still sent and extracted); and
// over the SDK's provider with no exporter (spans recorded, then
// dropped). What tracing costs a task, in process and to a worker process.
func BenchmarkTracedRun(b *testing.B) {
	callers := sdktrace.NewTracerProvider()
	defer callers.Shutdown(context.Background())
	ctx, request := callers.Tracer("bench").Start(context.Background(), "request")
	defer request.End()
	spans := sdktrace.NewTracerProvider()
	defer spans.Shutdown(context.Background())
	tracers := []struct {
		name   string
		tracer pool.Tracer
	}{
		{"none", nil},
		{"poolotel-noop", poolotel.NewTracer(poolotel.TracerOptions{TracerProvider: noop.NewTracerProvider()})},
		{"poolotel-sdk", poolotel.NewTracer(poolotel.TracerOptions{TracerProvider: spans})},
	}
	for _, iso := range isolations {
		for _, tc := range tracers {
			b.Run("isolation="+iso.String()+"/tracer="+tc.name, func(b *testing.B) {
				p := newIsolated(b, iso, pool.Options{MinWorkers: workers, Tracer: tc.tracer})
				b.ReportAllocs()
				for i := 0; b.Loop(); i++ {
					if _, err := pool.Run(ctx, p, trivial, i); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
