package budget

import (
	"context"
	"iter"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// coverage counts how often each index ran.
type coverage []int

func (c coverage) assertOnce(t *testing.T) {
	t.Helper()
	for i, k := range c {
		require.Equal(t, 1, k, "index %d ran %d times", i, k)
	}
}

func TestStepperStepResumes(t *testing.T) {
	t.Parallel()
	const n = 23
	cov := make(coverage, n)
	opts, clk := withFake(Options{Budget: 5 * time.Millisecond})
	s, err := NewStepper(n, func(i int) { cov[i]++; clk.advance(time.Millisecond) }, opts)
	require.NoError(t, err)

	ctx := context.Background()
	assert.Equal(t, Chunk{}, s.Last())
	var nexts []int
	for {
		more, err := s.Step(ctx)
		require.NoError(t, err)
		nexts = append(nexts, s.Next())
		assert.Equal(t, s.Next(), s.Last().End)
		clk.advance(time.Second) // the caller's own tick work between steps
		if !more {
			break
		}
	}
	assert.Equal(t, []int{5, 10, 15, 20, 23}, nexts)
	cov.assertOnce(t)
	assert.True(t, s.Done())

	more, err := s.Step(ctx)
	assert.False(t, more)
	assert.NoError(t, err, "stepping a finished Stepper is a no-op")

	rep := s.Report()
	assert.Equal(t, n, rep.Items)
	assert.Equal(t, 5, rep.Chunks)
	assert.Equal(t, 5*time.Millisecond, rep.MaxBlock)
	assert.Equal(t, time.Duration(n)*time.Millisecond, rep.Busy)
	assert.Equal(t, 4*time.Second+time.Duration(n)*time.Millisecond, rep.Total, "first chunk start to last chunk end")
	assert.Zero(t, rep.Yields, "a Stepper never yields itself")
}

func TestStepperCanceledStepRunsNothing(t *testing.T) {
	t.Parallel()
	cov := make(coverage, 12)
	opts, clk := withFake(Options{Budget: 5 * time.Millisecond})
	s, err := NewStepper(len(cov), func(i int) { cov[i]++; clk.advance(time.Millisecond) }, opts)
	require.NoError(t, err)

	_, err = s.Step(context.Background())
	require.NoError(t, err)
	dead, cancel := context.WithCancel(context.Background())
	cancel()
	more, err := s.Step(dead)
	require.ErrorIs(t, err, context.Canceled)
	assert.True(t, more)
	assert.Equal(t, 5, s.Next(), "nothing ran under the dead ctx")

	for more := true; more; {
		more, err = s.Step(context.Background())
		require.NoError(t, err)
	}
	cov.assertOnce(t)
}

func TestChunksIteratorBreakAndResume(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		n       int
		breakAt []int // break after this many chunks, each time ranging anew
	}{
		{"empty", 0, nil},
		{"one item", 1, []int{1}},
		{"break every chunk", 23, []int{1, 1, 1, 1, 1}},
		{"break after two, then all", 23, []int{2, 100}},
		{"all at once", 23, []int{100}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cov := make(coverage, tc.n)
			opts, clk := withFake(Options{Budget: 5 * time.Millisecond})
			s, err := NewStepper(tc.n, func(i int) { cov[i]++; clk.advance(time.Millisecond) }, opts)
			require.NoError(t, err)
			prevEnd := 0
			for _, limit := range tc.breakAt {
				k := 0
				for c, err := range s.Chunks(context.Background()) {
					require.NoError(t, err)
					assert.Equal(t, prevEnd, c.Start, "chunks are contiguous across resumes")
					assert.Greater(t, c.End, c.Start)
					prevEnd = c.End
					if k++; k == limit {
						break
					}
				}
			}
			assert.True(t, s.Done())
			assert.Equal(t, tc.n, prevEnd)
			cov.assertOnce(t)
		})
	}
}

func TestChunksIteratorStopsOnCtx(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	opts, clk := withFake(Options{Budget: 5 * time.Millisecond})
	s, err := NewStepper(100, func(int) { clk.advance(time.Millisecond) }, opts)
	require.NoError(t, err)
	var errs []error
	var got []Chunk
	for c, err := range s.Chunks(ctx) {
		got = append(got, c)
		errs = append(errs, err)
		if len(got) == 2 {
			cancel()
		}
	}
	require.Len(t, got, 3)
	assert.NoError(t, errs[0])
	assert.NoError(t, errs[1])
	assert.ErrorIs(t, errs[2], context.Canceled)
	assert.Equal(t, Chunk{Start: 10, End: 10}, got[2], "the error names where the run stopped")
	assert.Equal(t, 10, s.Next())
}

// TestChunksWithPull advances the iterator once per "tick" with iter.Pull,
// the form for loops that return between ticks.
func TestChunksWithPull(t *testing.T) {
	t.Parallel()
	cov := make(coverage, 1000)
	opts, clk := withFake(Options{Budget: 2 * time.Millisecond})
	s, err := NewStepper(len(cov), func(i int) { cov[i]++; clk.advance(100 * time.Microsecond) }, opts)
	require.NoError(t, err)
	next, stop := iter.Pull2(s.Chunks(context.Background()))
	defer stop()
	ticks := 0
	for {
		c, err, ok := next()
		if !ok {
			break
		}
		require.NoError(t, err)
		assert.Equal(t, 20, c.End-c.Start, "2 ms of 100 µs items")
		ticks++
	}
	assert.Equal(t, 50, ticks)
	cov.assertOnce(t)
}
