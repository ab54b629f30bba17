package pool

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestRuntimeSummary(t *testing.T) {
	t.Parallel()
	s := runtimeSummary([]uint64{0, 90, 9, 1, 0}, testBounds)
	assert.EqualValues(t, 100, s.Count)
	assert.Equal(t, time.Millisecond, s.P50)
	assert.Equal(t, time.Millisecond, s.P90, "the 90th of 100 is the last of the ninety")
	assert.Equal(t, 10*time.Millisecond, s.P99)
	assert.Equal(t, 100*time.Millisecond, s.Max)
	// Each latency at the middle of its bucket: 90 × 0.5 ms + 9 × 5.5 ms + 55 ms.
	assert.Equal(t, 149500*time.Microsecond, s.Sum)
	assert.Equal(t, []Bucket{{time.Millisecond, 90}, {10 * time.Millisecond, 9}, {100 * time.Millisecond, 1}}, s.Buckets)

	assert.Zero(t, runtimeSummary(make([]uint64, 5), testBounds).Count)
}

// The process has scheduled goroutines by the time a test runs.
func TestSchedLatency(t *testing.T) {
	t.Parallel()
	s := SchedLatency()
	assert.NotZero(t, s.Count)
	assert.LessOrEqual(t, s.P50, s.P90)
	assert.LessOrEqual(t, s.P90, s.P99)
	assert.LessOrEqual(t, s.P99, s.Max)
	assert.NotEmpty(t, s.Buckets)
}

func BenchmarkSchedLatency(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		SchedLatency()
	}
}
