package poolprom_test

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/poolprom"
)

// gatheredHistogram gathers c through a pedantic registry, in protobuf
// form, and returns the histogram of family name's first series (nil
// where there is no such family).
func gatheredHistogram(t *testing.T, c *poolprom.Collector, name string) *dto.Histogram {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	families, err := reg.Gather()
	require.NoError(t, err)
	for _, f := range families {
		if f.GetName() == name {
			return f.Metric[0].Histogram
		}
	}
	return nil
}

// nativeCount is how many samples h's native buckets hold: its
// positive buckets' counts and its zero bucket's.
func nativeCount(h *dto.Histogram) uint64 {
	var n, count int64
	for _, d := range h.PositiveDelta {
		count += d
		n += count
	}
	return uint64(n) + h.GetZeroCount()
}
