package pool

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBucketBounds(t *testing.T) {
	t.Parallel()
	prevTop := uint64(0)
	for i := range histBuckets - 1 {
		top := bucketTop(i)
		if i > 0 {
			require.Equal(t, prevTop+1, bucketTop(i-1)+1)
			require.Greater(t, top, prevTop, "bucket %d", i)
		}
		require.Equal(t, i, bucketOf(top), "top of bucket %d", i)
		require.Equal(t, i+1, bucketOf(top+1), "past the top of bucket %d", i)
		prevTop = top
	}
	for _, v := range []uint64{0, 1, 7, 8, 9, 1000, 1 << 40, 1<<63 - 1} {
		b := bucketOf(v)
		require.LessOrEqual(t, v, bucketTop(b))
		if v >= 8 {
			assert.LessOrEqual(t, float64(bucketTop(b)-v)/float64(v), 0.125, "relative error at %d", v)
		}
	}
}

func TestSummaryQuantiles(t *testing.T) {
	t.Parallel()
	var h histogram
	r := rand.New(rand.NewPCG(1, 2))
	values := make([]int64, 10000)
	for i := range values {
		values[i] = int64(r.ExpFloat64() * float64(time.Millisecond))
		h.record(values[i])
	}
	slices.Sort(values)
	s := h.summary()
	require.Equal(t, uint64(len(values)), s.Count)
	assert.Equal(t, time.Duration(values[len(values)-1]), s.Max)
	for _, q := range []struct {
		got time.Duration
		p   float64
	}{{s.P50, 0.50}, {s.P90, 0.90}, {s.P99, 0.99}} {
		want := float64(values[int(q.p*float64(len(values)-1))])
		assert.InEpsilon(t, want, float64(q.got), 0.13, "P%v", q.p*100)
		assert.GreaterOrEqual(t, float64(q.got), want*0.99, "quantiles are upper bounds")
	}
	var empty histogram
	assert.Equal(t, Summary{}, empty.summary())

	// The buckets hold every value once, in order, each under its bound.
	var n uint64
	var sum int64
	for _, v := range values {
		sum += v
	}
	assert.Equal(t, time.Duration(sum), s.Sum)
	prev := time.Duration(-1)
	for _, b := range s.Buckets {
		assert.Greater(t, b.UpperBound, prev)
		assert.Positive(t, b.Count)
		prev = b.UpperBound
		n += b.Count
	}
	assert.Equal(t, s.Count, n)
	below := 0
	for _, v := range values {
		if time.Duration(v) <= s.Buckets[0].UpperBound {
			below++
		}
	}
	assert.EqualValues(t, s.Buckets[0].Count, below)
}
