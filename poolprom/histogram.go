package poolprom

import (
	"math"
	"sort"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/offloadgo/offload/pool"
)

// nativeSchema is the native histograms' schema: 2^(2^-3), eight buckets
// per power of two, as the pool keeps its own.
const nativeSchema = 3

// histogram is a pool.Summary as a Prometheus histogram with both classic
// buckets (for the text format and older servers) and native ones (for a
// server that negotiates the protobuf format). client_golang's constant
// histograms carry one kind or the other, hence this Metric.
type histogram struct {
	desc   *prometheus.Desc
	labels []*dto.LabelPair
	h      dto.Histogram
}

// newHistogram converts s, its durations in seconds. A pool bucket counts
// toward a classic bound when its upper bound is at or below it, and goes
// to the native bucket that holds its upper bound: both within the pool's
// 12.5%.
func newHistogram(desc *prometheus.Desc, s pool.Summary, bounds []float64, labelValues ...string) prometheus.Metric {
	count, sum := s.Count, s.Sum.Seconds()
	schema, zeroThreshold := int32(nativeSchema), 0.0
	m := &histogram{desc: desc, labels: prometheus.MakeLabelPairs(desc, labelValues)}
	m.h = dto.Histogram{SampleCount: &count, SampleSum: &sum, Schema: &schema, ZeroThreshold: &zeroThreshold}

	cumulative := make([]uint64, len(bounds))
	native := map[int]int64{}
	var zero uint64
	for _, b := range s.Buckets {
		top := b.UpperBound.Seconds()
		if i := sort.SearchFloat64s(bounds, top); i < len(bounds) {
			cumulative[i] += b.Count
		}
		if b.UpperBound <= 0 {
			zero += b.Count
			continue
		}
		native[int(math.Ceil(math.Log2(top)*(1<<nativeSchema)))] += int64(b.Count)
	}
	var running uint64
	for i, bound := range bounds {
		running += cumulative[i]
		m.h.Bucket = append(m.h.Bucket, &dto.Bucket{CumulativeCount: new(running), UpperBound: new(bound)})
	}
	m.h.ZeroCount = &zero
	m.h.PositiveSpan, m.h.PositiveDelta = spans(native)
	return m
}

// spans encodes native bucket counts by index as Prometheus does: runs of
// consecutive indices (each span's offset from the previous run's end)
// and each count as the difference from the one before.
func spans(counts map[int]int64) ([]*dto.BucketSpan, []int64) {
	if len(counts) == 0 {
		return []*dto.BucketSpan{{Offset: new(int32(0)), Length: new(uint32(0))}}, nil
	}
	idx := make([]int, 0, len(counts))
	for i := range counts {
		idx = append(idx, i)
	}
	sort.Ints(idx)
	var out []*dto.BucketSpan
	var deltas []int64
	var prevCount int64
	next := 0 // the index after the last span
	for k, i := range idx {
		if k == 0 || i != idx[k-1]+1 {
			offset := int32(i - next)
			if k == 0 {
				offset = int32(i)
			}
			out = append(out, &dto.BucketSpan{Offset: &offset, Length: new(uint32(0))})
		}
		*out[len(out)-1].Length++
		deltas = append(deltas, counts[i]-prevCount)
		prevCount = counts[i]
		next = i + 1
	}
	return out, deltas
}

func (m *histogram) Desc() *prometheus.Desc { return m.desc }

func (m *histogram) Write(out *dto.Metric) error {
	out.Label = m.labels
	out.Histogram = &m.h
	return nil
}
