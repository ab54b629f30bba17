package poolotel_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/trace"

	"github.com/offloadgo/offload/pool"
)

// A task whose worker process never came up ends its span as "not
// started", not as a crash: nothing ran.
func TestTracerWorkerNotStarted(t *testing.T) {
	tr := newTraced(t)
	p, err := pool.New(pool.Options{Workers: 1, Isolation: pool.Subprocess, Tracer: tr.tracer,
		Subprocess: pool.SubprocessOptions{StartTimeout: time.Nanosecond}})
	require.NoError(t, err)
	defer p.Close()

	_, err = pool.Run(tr.ctx, p, echo, 1)
	require.ErrorIs(t, err, pool.ErrWorkerStartFailed)
	tr.checkTaskSpan(t, tr.taskSpan(t, "poolotel.echo"), pool.Subprocess, trace.SpanKindClient, "not started")
}
