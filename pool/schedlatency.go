package pool

import (
	"math"
	"runtime/metrics"
	"time"
)

// SchedLatency summarizes the process's scheduling latency since it
// started: how long its goroutines waited, runnable, for a CPU, as the Go
// runtime records it (runtime/metrics /sched/latencies:seconds). It is the
// congestion no pool sees: when handlers saturate GOMAXPROCS, every
// request waits here before it runs. Exporters show it beside a pool's
// WaitTime and RunTime (packages poolprom and poolotel do).
//
// The runtime keeps the latencies in buckets whose bounds grow by at most
// about a quarter: P50, P90, P99 and Max are the upper bounds of the
// buckets they fall in, and Sum (and Mean) counts each latency at the
// middle of its bucket, so all are estimates within a bucket. Buckets are
// the runtime's, those with a count. Each call reads the runtime's
// metrics (about 2.4 µs and 5 KB: BenchmarkSchedLatency); it is safe for
// concurrent use. The zero
// Summary comes back on a runtime without the metric.
func SchedLatency() Summary {
	sample := []metrics.Sample{{Name: schedLatencies}}
	metrics.Read(sample)
	if sample[0].Value.Kind() != metrics.KindFloat64Histogram {
		return Summary{}
	}
	h := sample[0].Value.Float64Histogram()
	return runtimeSummary(h.Counts, h.Buckets)
}

// runtimeSummary is a Summary of a runtime/metrics histogram: counts by
// bucket, and bounds, one more than counts, in seconds.
func runtimeSummary(counts []uint64, bounds []float64) Summary {
	var s Summary
	var sum float64
	for i, n := range counts {
		if n == 0 {
			continue
		}
		upper := bucketUpper(bounds, i)
		lower := max(0, bounds[i]) // the first bucket's is -Inf
		mid := (lower + upper.Seconds()) / 2
		sum += mid * float64(n)
		s.Count += n
		s.Max = upper
		s.Buckets = append(s.Buckets, Bucket{UpperBound: upper, Count: n})
	}
	if s.Count == 0 {
		return s
	}
	s.Sum = time.Duration(sum * float64(time.Second))
	s.Mean = s.Sum / time.Duration(s.Count)
	zero := make([]uint64, len(counts))
	s.P50 = deltaQuantile(counts, zero, bounds, 0.50)
	s.P90 = deltaQuantile(counts, zero, bounds, 0.90)
	s.P99 = deltaQuantile(counts, zero, bounds, 0.99)
	return s
}

// bucketUpper is the upper bound of a runtime/metrics histogram's bucket
// i, as a duration: the lower bound for the last, open-ended bucket, and
// never below 0.
func bucketUpper(bounds []float64, i int) time.Duration {
	b := bounds[i+1]
	if math.IsInf(b, 1) {
		b = bounds[i]
	}
	return time.Duration(max(0, b) * float64(time.Second))
}
