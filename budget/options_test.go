package budget

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestInvalidArguments(t *testing.T) {
	t.Parallel()
	noop := func(int) {}
	cases := []struct {
		name string
		n    int
		fn   func(int)
		opts Options
		msg  string
	}{
		{"negative budget", 3, noop, Options{Budget: -time.Millisecond}, "negative Budget"},
		{"negative duty cycle", 3, noop, Options{DutyCycle: -0.1}, "DutyCycle"},
		{"duty cycle above one", 3, noop, Options{DutyCycle: 1.5}, "DutyCycle"},
		{"NaN duty cycle", 3, noop, Options{DutyCycle: math.NaN()}, "DutyCycle"},
		{"yield with duty cycle", 3, noop, Options{DutyCycle: 0.5, Yield: func() {}}, "exclusive"},
		{"negative count", -1, noop, Options{}, "negative item count"},
		{"nil func", 3, nil, Options{}, "nil func"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ran := 0
			fn := tc.fn
			if fn != nil {
				fn = func(int) { ran++ }
			}
			rep, err := Loop(context.Background(), tc.n, fn, tc.opts)
			require.ErrorIs(t, err, ErrInvalidOptions)
			assert.Contains(t, err.Error(), tc.msg)
			assert.Contains(t, err.Error(), "budget: ")
			assert.Equal(t, Report{}, rep)
			assert.Zero(t, ran, "nothing runs on bad arguments")

			s, err := NewStepper(tc.n, fn, tc.opts)
			require.ErrorIs(t, err, ErrInvalidOptions)
			assert.Nil(t, s)

			if tc.n >= 0 {
				items := make([]int, tc.n)
				var efn func(int)
				if fn != nil {
					efn = func(int) { ran++ }
				}
				_, err = Each(context.Background(), items, efn, tc.opts)
				require.ErrorIs(t, err, ErrInvalidOptions)
				assert.Zero(t, ran)
			}
		})
	}
}

func TestValidOptionEdges(t *testing.T) {
	t.Parallel()
	for _, opts := range []Options{
		{},
		{Budget: time.Nanosecond},
		{DutyCycle: 0},
		{DutyCycle: 1, Yield: func() {}}, // 1 means no rest, so Yield is fine
		{DutyCycle: 0.5},
	} {
		rep, err := Loop(context.Background(), 10, func(int) {}, opts)
		require.NoError(t, err, "%+v", opts)
		assert.Equal(t, 10, rep.Items)
	}
}

func TestZeroBudgetMeansDefault(t *testing.T) {
	t.Parallel()
	opts, clk := withFake(Options{})
	rep, err := Loop(context.Background(), 20, func(int) { clk.advance(time.Millisecond) }, opts)
	require.NoError(t, err)
	assert.Equal(t, 4, rep.Chunks, "1 ms items in 5 ms chunks")
	assert.Equal(t, DefaultBudget, rep.MaxBlock)
}
