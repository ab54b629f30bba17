package poolotel_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.uber.org/goleak"

	"github.com/offloadgo/offload/internal/testkit"
	"github.com/offloadgo/offload/natsremote"
	"github.com/offloadgo/offload/pool"
	"github.com/offloadgo/offload/poolotel"
)

func TestMain(m *testing.M) {
	// The test binary is also the worker processes and the node processes
	// of tracer_test.go, which continue their callers' traces: a worker
	// process extracts, a node's pool makes spans of its own (recorded
	// by no one) under the caller's.
	natsremote.Main(pool.MainOptions{Tracer: poolotel.NewTracer(poolotel.TracerOptions{TracerProvider: sdktrace.NewTracerProvider()})})
	goleak.VerifyTestMain(m, testkit.IgnoreSourceSetup) // jobs' tests (internal/jobstest)
}

var (
	echo = pool.Register("poolotel.echo", func(_ context.Context, n int) (int, error) { return n, nil })
	fail = pool.Register("poolotel.fail", func(context.Context, int) (int, error) { return 0, errors.New("no") })
	// block holds its worker until its channel closes.
	block = pool.Register("poolotel.block", func(_ context.Context, release chan struct{}) (int, error) {
		<-release
		return 0, nil
	})
)

// newPool is a pool of o, closed when the test ends.
func newPool(t *testing.T, o pool.Options) *pool.Pool {
	t.Helper()
	p, err := pool.New(o)
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Close() })
	return p
}

// newMeter is a meter whose metrics reader reads; its provider shuts
// down when the test ends.
func newMeter(t *testing.T) (metric.Meter, *sdkmetric.ManualReader) {
	t.Helper()
	reader := sdkmetric.NewManualReader()
	provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = provider.Shutdown(context.Background()) })
	return provider.Meter("test"), reader
}

func collect(t *testing.T, r *sdkmetric.ManualReader) map[string]metricdata.Metrics {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, r.Collect(context.Background(), &rm))
	out := map[string]metricdata.Metrics{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			out[m.Name] = m
		}
	}
	return out
}

// point returns the value of m's data point whose attributes include all
// of want.
func point(t *testing.T, m metricdata.Metrics, want ...attribute.KeyValue) float64 {
	t.Helper()
	has := func(set attribute.Set) bool {
		for _, kv := range want {
			if v, ok := set.Value(kv.Key); !ok || v != kv.Value {
				return false
			}
		}
		return true
	}
	var v float64
	var ok bool
	switch d := m.Data.(type) {
	case metricdata.Sum[int64]:
		v, ok = pointWhere(d.DataPoints, has)
	case metricdata.Sum[float64]:
		v, ok = pointWhere(d.DataPoints, has)
	case metricdata.Gauge[int64]:
		v, ok = pointWhere(d.DataPoints, has)
	case metricdata.Gauge[float64]:
		v, ok = pointWhere(d.DataPoints, has)
	}
	if ok {
		return v
	}
	t.Fatalf("%s has no point with %v", m.Name, want)
	return 0
}

// pointWhere is the value of the first of points whose attributes has
// accepts.
func pointWhere[N int64 | float64](points []metricdata.DataPoint[N], has func(attribute.Set) bool) (float64, bool) {
	for _, p := range points {
		if has(p.Attributes) {
			return float64(p.Value), true
		}
	}
	return 0, false
}

// The instruments move as the pool works, read through the SDK's manual
// reader; Unregister stops the reports.
func TestRegister(t *testing.T) {
	p := newPool(t, pool.Options{Workers: 1, MaxQueue: pool.NoQueue})
	meter, reader := newMeter(t)
	reg, err := poolotel.Register(meter, "p", p)
	require.NoError(t, err)
	_, err = poolotel.Register(meter, "nil", nil)
	require.Error(t, err)

	ctx := context.Background()
	for i := range 4 {
		_, err := pool.Run(ctx, p, echo, i)
		require.NoError(t, err)
	}
	_, err = pool.Run(ctx, p, fail, 0)
	require.Error(t, err)
	require.Eventually(t, func() bool { return p.Stats().Tasks["poolotel.fail"].Failed == 1 }, 5*time.Second, time.Millisecond)

	poolAttr := attribute.String("pool", "p")
	m := collect(t, reader)
	assert.Equal(t, 5.0, point(t, m["offload.pool.tasks.submitted"], poolAttr))
	assert.Equal(t, 4.0, point(t, m["offload.pool.tasks.completed"], poolAttr))
	assert.Equal(t, 1.0, point(t, m["offload.pool.tasks.failed"], poolAttr))
	assert.Equal(t, 1.0, point(t, m["offload.pool.workers"], poolAttr))
	assert.Equal(t, 1.0, point(t, m["offload.pool.workers.max"], poolAttr))
	assert.Zero(t, point(t, m["offload.pool.tasks.slow"], poolAttr), "no SlowTaskAfter")
	assert.Zero(t, point(t, m["offload.pool.tasks.canceled_on_node"], poolAttr), "no node")
	assert.Equal(t, 0.0, point(t, m["offload.pool.workers.busy"], poolAttr))
	assert.Greater(t, point(t, m["offload.pool.run.duration"], poolAttr, attribute.Float64("quantile", 1)), 0.0)
	assert.Greater(t, point(t, m["offload.pool.run.time.total"], poolAttr), 0.0)
	assert.Equal(t, 4.0, point(t, m["offload.pool.task.runs"], poolAttr,
		attribute.String("task", "poolotel.echo"), attribute.String("outcome", "completed")))
	assert.Equal(t, 1.0, point(t, m["offload.pool.task.runs"], poolAttr,
		attribute.String("task", "poolotel.fail"), attribute.String("outcome", "failed")))

	assert.Zero(t, point(t, m["offload.pool.running.oldest"], poolAttr), "nothing runs")
	assert.Zero(t, point(t, m["offload.pool.shed"], poolAttr, attribute.String("reason", "queue_full")))

	// A held task: its age shows, and Shed's 503s count by reason.
	release := make(chan struct{})
	held, err := pool.Submit(ctx, p, block, release)
	require.NoError(t, err)
	require.Eventually(t, func() bool { return p.Stats().OldestRunning > 0 }, 5*time.Second, time.Millisecond)
	rec := httptest.NewRecorder()
	pool.Shed(p, pool.ShedOptions{})(http.NotFoundHandler()).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
	require.Equal(t, http.StatusServiceUnavailable, rec.Code)
	m = collect(t, reader)
	assert.Positive(t, point(t, m["offload.pool.running.oldest"], poolAttr))
	assert.Equal(t, 1.0, point(t, m["offload.pool.shed"], poolAttr, attribute.String("reason", "queue_full")))
	assert.Zero(t, point(t, m["offload.pool.shed"], poolAttr, attribute.String("reason", "max_wait")))
	assert.Zero(t, point(t, m["offload.pool.shed"], poolAttr, attribute.String("reason", "no_node")))
	assert.Zero(t, point(t, m["offload.pool.shed"], poolAttr, attribute.String("reason", "lag")))
	close(release)
	_, err = held.Wait()
	require.NoError(t, err)

	_, err = pool.Run(ctx, p, echo, 9)
	require.NoError(t, err)
	require.NoError(t, p.SetWorkers(3))
	m = collect(t, reader)
	assert.Equal(t, 7.0, point(t, m["offload.pool.tasks.submitted"], poolAttr), "counters move")
	assert.Equal(t, 3.0, point(t, m["offload.pool.workers.max"], poolAttr), "as SetWorkers set it")

	require.NoError(t, reg.Unregister())
	m = collect(t, reader)
	_, reported := m["offload.pool.tasks.submitted"]
	assert.False(t, reported, "nothing is observed after Unregister")
}

// A task past SlowTaskAfter counts in offload.pool.tasks.slow.
func TestRegisterSlowTasks(t *testing.T) {
	p := newPool(t, pool.Options{Workers: 1, SlowTaskAfter: time.Millisecond})
	meter, reader := newMeter(t)
	reg, err := poolotel.Register(meter, "slow", p)
	require.NoError(t, err)
	defer reg.Unregister()

	release := make(chan struct{})
	held, err := pool.Submit(context.Background(), p, block, release)
	require.NoError(t, err)
	require.Eventually(t, func() bool { return p.Stats().Slow == 1 }, 5*time.Second, time.Millisecond)
	assert.Equal(t, 1.0, point(t, collect(t, reader)["offload.pool.tasks.slow"], attribute.String("pool", "slow")))
	close(release)
	_, err = held.Wait()
	require.NoError(t, err)
}
