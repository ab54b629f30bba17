package pool

import (
	"math/bits"
	"time"
)

// histogram is a log-linear histogram of durations: each power of two is
// split into 8 buckets, so a reported quantile is within 12.5% of the true
// value (and Max is exact). Each worker owns one, written and read under
// the pool's lock, which the worker holds between two tasks anyway: so
// recording is a few plain stores, and no cache line is shared with
// another worker. A library such as HdrHistogram would give finer
// precision at a higher cost per record; 12.5% is plenty for the P50/P99
// that drive shedding and dashboards.
type histogram struct {
	buckets [histBuckets]uint64
	sum     uint64 // ns
	max     int64  // ns
}

const (
	subBits     = 3
	subBuckets  = 1 << subBits
	histBuckets = (64 - subBits + 1) * subBuckets
)

// bucketOf maps a non-negative ns value to its bucket.
func bucketOf(v uint64) int {
	if v < subBuckets {
		return int(v)
	}
	e := bits.Len64(v) - 1 // v is in [2^e, 2^(e+1))
	return (e-subBits+1)*subBuckets + int(v>>(e-subBits)) - subBuckets
}

// bucketTop is the largest value that falls in bucket i.
func bucketTop(i int) uint64 {
	if i < subBuckets {
		return uint64(i)
	}
	e := i/subBuckets + subBits - 1
	m := uint64(i%subBuckets + subBuckets)
	return (m+1)<<(e-subBits) - 1
}

// record adds d.
func (h *histogram) record(d int64) {
	d = max(d, 0)
	h.buckets[bucketOf(uint64(d))]++
	h.sum += uint64(d)
	h.max = max(h.max, d)
}

// merge adds o's counts into h.
func (h *histogram) merge(o *histogram) {
	for i, n := range o.buckets {
		h.buckets[i] += n
	}
	h.sum += o.sum
	h.max = max(h.max, o.max)
}

// Summary describes a latency distribution since the pool was created.
// Quantiles are upper bounds within 12.5% of the true value; Sum and Max
// are exact.
type Summary struct {
	Count         uint64
	Sum           time.Duration
	Mean          time.Duration
	P50, P90, P99 time.Duration
	Max           time.Duration
	// Buckets are the distribution itself, for exporters: each power of
	// two split in eight, only those with a count, in ascending order.
	Buckets []Bucket
}

// Bucket is one bucket of a Summary: Count durations in
// (the previous bucket's UpperBound, UpperBound].
type Bucket struct {
	UpperBound time.Duration
	Count      uint64
}

func (h *histogram) summary() Summary {
	var total uint64
	for _, n := range h.buckets {
		total += n
	}
	s := Summary{Count: total, Sum: time.Duration(h.sum), Max: time.Duration(h.max)}
	if total == 0 {
		return s
	}
	s.Mean = s.Sum / time.Duration(total)
	for i, n := range h.buckets {
		if n > 0 {
			s.Buckets = append(s.Buckets, Bucket{UpperBound: time.Duration(bucketTop(i)), Count: n})
		}
	}
	quantile := func(q float64) time.Duration {
		rank := uint64(q*float64(total-1)) + 1
		var seen uint64
		for i, n := range h.buckets {
			if seen += n; seen >= rank {
				return min(time.Duration(bucketTop(i)), s.Max)
			}
		}
		return s.Max
	}
	s.P50, s.P90, s.P99 = quantile(0.50), quantile(0.90), quantile(0.99)
	return s
}
