package poolotel_test

import (
	"context"
	"fmt"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/offloadgo/offload/pool"
	"github.com/offloadgo/offload/poolotel"
)

// sameTrace reports whether the task's ctx continues the trace whose ID
// it is given.
var sameTrace = pool.Register("poolotel.example.sametrace", func(ctx context.Context, traceID string) (bool, error) {
	return trace.SpanContextFromContext(ctx).TraceID().String() == traceID, nil
})

// A pool with a Tracer gives each task a span under the caller's, and the
// task's ctx continues the caller's trace. The same holds in a worker
// process, whose main starts with pool.Main(pool.MainOptions{Tracer:
// tracer}), and on a node (natsremote.Main).
func ExampleNewTracer() {
	exporter := tracetest.NewInMemoryExporter()
	provider := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exporter))
	defer provider.Shutdown(context.Background())
	tracer := poolotel.NewTracer(poolotel.TracerOptions{TracerProvider: provider})

	p, err := pool.New(pool.Options{Workers: 1, Tracer: tracer})
	if err != nil {
		panic(err)
	}
	defer p.Close()

	ctx, request := provider.Tracer("service").Start(context.Background(), "request")
	same, err := pool.Run(ctx, p, sameTrace, request.SpanContext().TraceID().String())
	request.End()
	fmt.Println(same, err)
	spans := exporter.GetSpans()
	task, req := spans[0], spans[1]
	fmt.Println(task.Name, "under", req.Name+":", task.Parent.SpanID() == req.SpanContext.SpanID())
	for _, kv := range task.Attributes {
		fmt.Println(kv.Key, "=", kv.Value.String())
	}
	fmt.Println(task.Events[0].Name)
	// Output:
	// true <nil>
	// offload.task poolotel.example.sametrace under request: true
	// offload.task = poolotel.example.sametrace
	// offload.isolation = InProcess
	// offload.outcome = completed
	// offload.dequeued
}
