package budget

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAdaptiveStride drives items of a fixed cost with the fake clock: the
// number of items between clock reads must follow the cost, from a read
// after every item for slow items to huge strides for cheap ones.
func TestAdaptiveStride(t *testing.T) {
	t.Parallel()
	const budget = 5 * time.Millisecond // target read interval 50 µs
	cases := []struct {
		name           string
		cost           time.Duration
		n              int
		minPerRead     float64 // Items/ClockReads at least
		maxPerRead     float64 // and at most
		wantEveryItem  bool
		wantMaxBlockLE time.Duration
	}{
		{"slow items: read after every item", time.Millisecond, 200, 1, 1, true, budget},
		{"uneven multiple of the budget", 3 * time.Millisecond, 50, 1, 1, true, 6 * time.Millisecond},
		{"items above the interval: every item", 200 * time.Microsecond, 500, 1, 1, true, budget},
		{"10 µs items: about 5 per read", 10 * time.Microsecond, 20_000, 4, 5, false, budget},
		{"7 µs items", 7 * time.Microsecond, 20_000, 4, 7, false, budget + 7*time.Microsecond - 1},
		{"cheap items: huge strides", time.Nanosecond, 20_000_000, 10_000, 50_000, false, budget},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			opts, clk := withFake(Options{Budget: budget})
			rep, err := Loop(context.Background(), tc.n, func(int) { clk.advance(tc.cost) }, opts)
			require.NoError(t, err)
			require.Equal(t, tc.n, rep.Items)
			perRead := float64(rep.Items) / float64(rep.ClockReads)
			if tc.wantEveryItem {
				assert.Equal(t, rep.Items, rep.ClockReads)
			}
			assert.GreaterOrEqual(t, perRead, tc.minPerRead)
			assert.LessOrEqual(t, perRead, tc.maxPerRead)
			assert.LessOrEqual(t, rep.MaxBlock, tc.wantMaxBlockLE)
			assert.Less(t, rep.MaxBlock, budget+tc.cost, "uniform items overrun by less than one item")
			if tc.cost < budget/10 {
				assert.LessOrEqual(t, float64(rep.MaxBlock), 1.2*float64(budget), "uniform items: at most 1.2x the budget")
			}
		})
	}
}

// TestSlowItemsOverrunByAboutOneItem mixes 1 µs items with 3 ms ones: no
// chunk may run longer than the budget plus one slow item (plus the one
// read interval of cheap items that may follow it).
func TestSlowItemsOverrunByAboutOneItem(t *testing.T) {
	t.Parallel()
	const (
		budget   = 5 * time.Millisecond
		slow     = 3 * time.Millisecond
		interval = budget / checksPerBudget
	)
	for _, every := range []int{997, 50, 7, 2} {
		opts, clk := withFake(Options{Budget: budget})
		var chunks []time.Duration
		s, err := NewStepper(50_000, func(i int) {
			if i%every == every-1 {
				clk.advance(slow)
			} else {
				clk.advance(time.Microsecond)
			}
		}, opts)
		require.NoError(t, err)
		for c, err := range s.Chunks(context.Background()) {
			require.NoError(t, err)
			chunks = append(chunks, c.Took)
		}
		rep := s.Report()
		assert.LessOrEqual(t, rep.MaxBlock, budget+slow+interval, "slow item every %d", every)
		assert.Equal(t, rep.Chunks, len(chunks))
		assert.Equal(t, 50_000, rep.Items)
	}
}

// TestStrideRecoversAfterSlowItem checks both directions of adapt: a slow
// item drops the stride to 1 at once, and cheap items grow it back by at
// most doubling per read.
func TestStrideRecoversAfterSlowItem(t *testing.T) {
	t.Parallel()
	r := newRunner(Options{Budget: 5 * time.Millisecond, clock: &fakeClock{}})
	r.stride = 1000
	r.adapt(3*time.Millisecond, 1000) // one slow item hid in the stride
	assert.Equal(t, 16, r.stride, "50 µs / 3 µs per item")
	r.adapt(3*time.Millisecond, 1)
	assert.Equal(t, 1, r.stride)
	for _, want := range []int{2, 4, 8, 16, 32, 50, 50} {
		r.adapt(time.Duration(r.stride)*time.Microsecond, r.stride)
		assert.Equal(t, want, r.stride)
	}
	r.adapt(0, r.stride) // a clock too coarse to see the stride
	assert.Equal(t, 100, r.stride)
	r.stride = maxStride
	r.adapt(0, maxStride)
	assert.Equal(t, maxStride, r.stride, "capped")
}

func TestDutyCycleRests(t *testing.T) {
	t.Parallel()
	opts, clk := withFake(Options{Budget: 5 * time.Millisecond, DutyCycle: 0.25})
	rep, err := Loop(context.Background(), 100, func(int) { clk.advance(time.Millisecond) }, opts)
	require.NoError(t, err)
	assert.Equal(t, 20, rep.Chunks)
	require.Len(t, clk.sleeps, 19, "a rest between chunks, none before the first or after the last")
	for _, d := range clk.sleeps {
		assert.Equal(t, 15*time.Millisecond, d, "5 ms of work at 25%% owes 15 ms of rest")
	}
	assert.Equal(t, 100*time.Millisecond, rep.Busy)
	assert.Equal(t, 285*time.Millisecond, rep.Rest)
	assert.Equal(t, rep.Busy+rep.Rest, rep.Total)
	share := float64(rep.Busy) / float64(rep.Total)
	assert.InDelta(t, 0.25, share, 0.02)
}

// overSleepClock sleeps longer than asked, like a coarse timer.
type overSleepClock struct{ fakeClock }

func (c *overSleepClock) sleep(ctx context.Context, d time.Duration) {
	c.sleeps = append(c.sleeps, d) // what was asked for
	c.t += d + 2*time.Millisecond
}

func TestDutyCyclePaysBackOversleep(t *testing.T) {
	t.Parallel()
	clk := &overSleepClock{}
	rep, err := Loop(context.Background(), 100, func(int) { clk.advance(time.Millisecond) },
		Options{Budget: 5 * time.Millisecond, DutyCycle: 0.5, clock: clk})
	require.NoError(t, err)
	// Each chunk owes 5 ms and the clock rests 2 ms longer than asked: the
	// surplus is carried, so after the first rest only 3 ms are asked for.
	require.Len(t, clk.sleeps, 19)
	assert.Equal(t, 5*time.Millisecond, clk.sleeps[0])
	for _, d := range clk.sleeps[1:] {
		assert.Equal(t, 3*time.Millisecond, d)
	}
	assert.InDelta(t, 0.5, float64(rep.Busy)/float64(rep.Busy+rep.Rest), 0.05)
	assert.LessOrEqual(t, rep.Rest, rep.Busy+2*time.Millisecond)
}

// TestDutyCycleRealClock runs the real clock in a synctest bubble, with
// chunks of sleep: the bubble's clock advances only by them and the rests,
// so the share is exact however busy the machine.
func TestDutyCycleRealClock(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		rep, err := Loop(context.Background(), 40, func(int) { time.Sleep(250 * time.Microsecond) },
			Options{Budget: time.Millisecond, DutyCycle: 0.5})
		require.NoError(t, err)
		assert.Equal(t, 10*time.Millisecond, rep.Busy)
		assert.Equal(t, rep.Busy, rep.Rest+time.Millisecond, "a rest after each chunk but the last")
	})
}

func TestDutyCycleRestEndsWithCtx(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		time.AfterFunc(50*time.Millisecond, cancel)
		start := time.Now()
		// 1% of a core: each 2 ms chunk owes ~200 ms of rest.
		rep, err := Loop(ctx, 1000, func(int) { time.Sleep(time.Millisecond) },
			Options{Budget: 2 * time.Millisecond, DutyCycle: 0.01})
		require.ErrorIs(t, err, context.Canceled)
		assert.Equal(t, 50*time.Millisecond, time.Since(start), "the rest wakes when ctx ends")
		assert.Equal(t, 1, rep.Chunks)
	})
}
