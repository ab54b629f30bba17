package main

import (
	"math"
	"runtime/metrics"
	"slices"
	"sync"
	"time"
)

// schedWatch reads the runtime's histogram of how long goroutines sat
// runnable before they ran (/sched/latencies:seconds) and summarizes what
// was added since the previous read. In a server whose one core is taken by
// a CPU-bound worker, this is the wait of the goroutine that answers a
// request; in the load generator, the wait of the one that sends or reads it.
type schedWatch struct {
	mu     sync.Mutex
	sample []metrics.Sample
	last   []uint64
}

const schedMetric = "/sched/latencies:seconds"

func newSchedWatch() *schedWatch {
	s := &schedWatch{sample: []metrics.Sample{{Name: schedMetric}}}
	s.since() // start from now
	return s
}

// schedDist is a summary of scheduling latencies; P99 and Max are the
// upper bounds of their histogram buckets.
type schedDist struct {
	N        uint64
	P99, Max time.Duration
}

// since returns the latencies recorded since the previous call.
func (s *schedWatch) since() schedDist {
	s.mu.Lock()
	defer s.mu.Unlock()
	metrics.Read(s.sample)
	if s.sample[0].Value.Kind() != metrics.KindFloat64Histogram {
		return schedDist{}
	}
	h := s.sample[0].Value.Float64Histogram()
	delta := slices.Clone(h.Counts)
	if len(s.last) == len(delta) {
		for i := range delta {
			delta[i] -= s.last[i]
		}
	}
	s.last = slices.Clone(h.Counts)
	var d schedDist
	for _, c := range delta {
		d.N += c
	}
	if d.N == 0 {
		return d
	}
	upper := func(i int) time.Duration {
		b := h.Buckets[i+1]
		if math.IsInf(b, 1) {
			b = h.Buckets[i]
		}
		return time.Duration(b * float64(time.Second))
	}
	var seen uint64
	for i, c := range delta {
		if c == 0 {
			continue
		}
		seen += c
		if d.P99 == 0 && float64(seen) >= 0.99*float64(d.N) {
			d.P99 = upper(i)
		}
		d.Max = upper(i)
	}
	return d
}
