package poolprom_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/internal/promtest"
	"github.com/offloadgo/offload/pool"
	"github.com/offloadgo/offload/poolprom"
)

// The process's scheduling latency is scraped once, with no pool label,
// beside each pool's wait and run times: a histogram in the classic
// buckets and the native ones.
func TestCollectorSchedLatency(t *testing.T) {
	_, srv := collected(t, "lag", pool.Options{Workers: 1})
	m := promtest.Scrape(t, srv.URL)
	f := m["offload_sched_latency_seconds"]
	require.NotNil(t, f, "no offload_sched_latency_seconds")
	require.Len(t, f.Metric, 1, "one series for the process")
	assert.Empty(t, f.Metric[0].Label, "the lag is the process's, not a pool's")
	h := f.Metric[0].Histogram
	require.NotNil(t, h)
	assert.Positive(t, h.GetSampleCount(), "the process has scheduled goroutines")
	assert.Positive(t, h.GetSampleSum())
	var prev uint64
	for _, b := range h.Bucket {
		assert.GreaterOrEqual(t, b.GetCumulativeCount(), prev, "cumulative buckets at %v", b.GetUpperBound())
		prev = b.GetCumulativeCount()
	}
	assert.LessOrEqual(t, prev, h.GetSampleCount())
	assert.NotNil(t, m["offload_queue_wait_seconds"], "beside the pool's wait")

	// Gathered in protobuf form, its native buckets hold every latency.
	c := poolprom.New(poolprom.Options{Namespace: "test"})
	native := gatheredHistogram(t, c, "test_sched_latency_seconds")
	require.NotNil(t, native, "reported with no pool added too")
	assert.EqualValues(t, native.GetSampleCount(), nativeCount(native))
}
