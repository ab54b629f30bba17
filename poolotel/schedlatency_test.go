package poolotel_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/offloadgo/offload/pool"
	"github.com/offloadgo/offload/poolotel"
)

// The process's scheduling latency is read beside the pools' wait and
// run times, by quantile and with no pool attribute: one series per
// quantile however many pools are registered.
func TestRegisterSchedLatency(t *testing.T) {
	meter, reader := newMeter(t)
	for _, name := range []string{"a", "b"} {
		p := newPool(t, pool.Options{Workers: 1})
		reg, err := poolotel.Register(meter, name, p)
		require.NoError(t, err)
		defer reg.Unregister()
	}

	m := collect(t, reader)
	lag, ok := m["offload.process.sched.latency"]
	require.True(t, ok, "no offload.process.sched.latency")
	assert.Equal(t, "s", lag.Unit)
	g, ok := lag.Data.(metricdata.Gauge[float64])
	require.True(t, ok, "%T", lag.Data)
	require.Len(t, g.DataPoints, 4, "P50, P90, P99 and Max, once for the process")
	byQuantile := map[float64]float64{}
	for _, dp := range g.DataPoints {
		_, hasPool := dp.Attributes.Value("pool")
		assert.False(t, hasPool, "the lag is the process's, not a pool's")
		q, ok := dp.Attributes.Value("quantile")
		require.True(t, ok)
		byQuantile[q.AsFloat64()] = dp.Value
	}
	assert.Positive(t, byQuantile[0.99], "the process has scheduled goroutines")
	assert.LessOrEqual(t, byQuantile[0.5], byQuantile[0.9])
	assert.LessOrEqual(t, byQuantile[0.9], byQuantile[0.99])
	assert.LessOrEqual(t, byQuantile[0.99], byQuantile[1])
	for _, name := range []string{"a", "b"} {
		assert.Equal(t, 1.0, point(t, m["offload.pool.workers.max"], attribute.String("pool", name)), "beside the pools' own")
	}
}
