package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// One run with a stall moves the row's /fast p99 range, not its median.
func TestMedianP99IgnoresOneStalledRun(t *testing.T) {
	t.Parallel()
	var samples []sample
	for run, base := range []time.Duration{2 * time.Millisecond, 40 * time.Millisecond, 3 * time.Millisecond} {
		for i := range 100 {
			samples = append(samples, sample{Stream: "fast", Run: run, Latency: base + time.Duration(i)*time.Microsecond})
		}
		samples = append(samples, sample{Stream: "job", Run: run, Latency: time.Second})
	}
	median, lo, hi := medianP99(samples, 3)
	assert.Equal(t, 3*time.Millisecond+99*time.Microsecond, median)
	assert.Equal(t, 2*time.Millisecond+99*time.Microsecond, lo)
	assert.Equal(t, 40*time.Millisecond+99*time.Microsecond, hi)

	median, lo, hi = medianP99(nil, 3)
	assert.Zero(t, median+lo+hi)
}

// A reference row pools its runs' samples but reports goodput per second
// of one run, and its p99 and server scheduling latency as the median
// run's.
func TestSummarizeRepeatedReferenceRow(t *testing.T) {
	t.Parallel()
	st := settings{Duration: time.Second, Repeat: 3}
	o := outcome{Scenario: scenario{Group: "g", Name: "n", Mode: "pool1"}, Length: time.Second, Runs: 3}
	for run := range 3 {
		for i := range 100 {
			o.Samples = append(o.Samples, sample{Stream: "fast", Run: run, At: time.Duration(i) * 10 * time.Millisecond,
				Latency: time.Duration(run+1) * time.Millisecond, Status: 200})
		}
		o.Samples = append(o.Samples, sample{Stream: "job", Run: run, At: 500 * time.Millisecond, Latency: 200 * time.Millisecond, Status: 200})
	}
	// The server's scheduling latency, one reading per run, the middle
	// run stalled: the row reports the median run's.
	for _, p99 := range []time.Duration{time.Millisecond, 30 * time.Millisecond, 2 * time.Millisecond} {
		o.Stats = append(o.Stats, serverStats{Sched: schedDist{N: 10, P99: p99, Max: 2 * p99}})
	}
	summarize(&o, st)
	r := o.Rows[0]
	assert.Equal(t, 3, r.Runs)
	assert.InDelta(t, 1.0, r.Goodput, 1e-9, "one job per second of each run")
	assert.Equal(t, 2*time.Millisecond, r.Fast.P99)
	assert.Equal(t, time.Millisecond, r.FastP99Lo)
	assert.Equal(t, 3*time.Millisecond, r.FastP99Hi)
	assert.Equal(t, 300, r.Fast.N)
	assert.Equal(t, schedDist{N: 10, P99: 2 * time.Millisecond, Max: 4 * time.Millisecond}, r.SchedServer)
}

// Shed's 503s (marked by the server) are told from the 503s of tasks
// failed after queueing, and the generator's lag is taken off the former.
func TestWindowSeparatesShedFromDropped(t *testing.T) {
	t.Parallel()
	samples := []sample{
		{Stream: "job", Status: 503, Shed: true, Retry: true, Latency: 3 * time.Millisecond, Lag: 2 * time.Millisecond},
		{Stream: "job", Status: 503, Retry: true, Latency: 400 * time.Millisecond},
		{Stream: "job", Status: 503, Shed: true, Latency: time.Millisecond},
		{Stream: "job", Status: 0, Latency: 2 * time.Second},
		{Stream: "job", Status: 200, Latency: 300 * time.Millisecond},
	}
	r := window(samples, 0, time.Second, true)
	assert.Equal(t, 5, r.Jobs)
	assert.Equal(t, 2, r.Shed)
	assert.Equal(t, 1, r.Dropped)
	assert.Equal(t, 1, r.ShedNoRA)
	assert.Equal(t, 1, r.Errors)
	assert.Equal(t, 3*time.Millisecond, r.ShedTime.Max)
	assert.Equal(t, time.Millisecond, r.ShedSent.Max)
	assert.InDelta(t, 1.0, r.Goodput, 1e-9)
}

func TestChunkSpec(t *testing.T) {
	t.Parallel()
	tests := []struct {
		mode       string
		chunk      time.Duration
		yieldAfter bool
		netpoll    bool
		ok         bool
	}{
		{"chunk5", 5 * time.Millisecond, false, false, true},
		{"chunk20after", 20 * time.Millisecond, true, false, true},
		{"chunk5netpoll", 5 * time.Millisecond, false, true, true},
		{"chunk0", 0, false, false, false},
		{"chunkafter", 0, false, false, false},
		{"chunk-1", 0, false, false, false},
		{"inline", 0, false, false, false},
	}
	for _, tt := range tests {
		opts, ok := chunkSpec(tt.mode)
		assert.Equal(t, tt.ok, ok, tt.mode)
		if ok {
			assert.Equal(t, tt.chunk, opts.Budget, tt.mode)
			assert.Equal(t, tt.yieldAfter, opts.NoYieldFirst, tt.mode)
			assert.Equal(t, tt.netpoll, opts.Yield != nil, tt.mode)
		}
	}
}
