package main

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// judge holds made-up rows against the bars: each bar both holds and
// misses on the right side of its threshold.
func TestJudge(t *testing.T) {
	t.Parallel()
	const capacity = 5.0
	reference := func(name string, p99 time.Duration) row {
		return row{Group: "reference: 200 ms CPU jobs beside /fast", Name: name, Fast: dist{P99: p99}}
	}
	overload := func(goodput float64, shed time.Duration, recovered time.Duration) []row {
		var rows []row
		for i := range overloadPhases {
			r := row{Group: "overload (c): test", Name: rowName(scenario{Phases: overloadPhases}, i),
				Goodput: goodput, ShedTime: dist{Max: shed}, ShedServer: dist{Max: shed / 2}, Recovered: -1}
			if i == len(overloadPhases)-1 {
				r.Recovered = recovered
			}
			rows = append(rows, r)
		}
		return rows
	}

	good := append([]row{
		reference("only /fast", 2*time.Millisecond),
		reference("1 job/s, pool 1 worker", 60*time.Millisecond),
		reference("1 job/s, pool 2 workers", 69*time.Millisecond),
	}, overload(2.5, 10*time.Millisecond, time.Second)...)
	bars := judge(good, capacity)
	require.Len(t, bars, 5)
	for _, b := range bars {
		assert.True(t, b.Holds, "%s: %s", b.Claim, b.Got)
	}

	bad := append([]row{
		reference("only /fast", 2*time.Millisecond),
		reference("1 job/s, pool 1 worker", 70*time.Millisecond),
		reference("1 job/s, pool 2 workers", time.Second),
	}, overload(1.9, shedAnswerWithin, recoverWithin)...)
	bars = judge(bad, capacity)
	require.Len(t, bars, 5)
	for _, b := range bars {
		assert.False(t, b.Holds, "%s: %s", b.Claim, b.Got)
	}

	var out bytes.Buffer
	printBars(&out, bars)
	assert.Contains(t, out.String(), "MISSED  1 job/s, pool 1 worker: /fast p99 < 10× the only-/fast baseline + 50ms: 70.0 ms (baseline 2.00 ms)")

	na := []row{{Group: "overload (c): test", Name: "0.5x capacity", NA: "n/a: no workers"}}
	assert.Empty(t, judge(na, capacity), "rows that did not run are not judged")
}
