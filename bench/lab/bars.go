package main

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// A bar is one of the reference page's claims, judged on this run's rows.
// Bars are figures of the machine the lab ran on, so the lab reports them
// and go test does not assert them: a busy machine misses bars without
// offload doing anything wrong.
type bar struct {
	Claim string // what should hold
	Got   string // what this run measured
	Holds bool
}

// Thresholds of the bars.
const (
	fastP99Factor    = 10                     // /fast p99 beside a pooled job, in baselines…
	fastP99Slack     = 50 * time.Millisecond  // …plus this
	shedAnswerWithin = 250 * time.Millisecond // Shed's 503s, client and server side
	goodputShare     = 0.4                    // of capacity, through the overload phases of scenario (c)
	recoverWithin    = 3 * time.Second        // after overload ends, in scenario (c)
)

// judge holds this run's rows against the bars. A bar whose rows did not
// run is left out.
func judge(rows []row, capacity float64) []bar {
	var bars []bar
	byName := map[string]row{}
	overload := map[string][]row{}
	var groups []string
	for _, r := range rows {
		if r.NA != "" {
			continue
		}
		if strings.HasPrefix(r.Group, "overload") {
			if overload[r.Group] == nil {
				groups = append(groups, r.Group)
			}
			overload[r.Group] = append(overload[r.Group], r)
			continue
		}
		byName[r.Group+"/"+r.Name] = r
	}

	base, ok := byName["reference: 200 ms CPU jobs beside /fast/only /fast"]
	for _, name := range []string{"1 job/s, pool 1 worker", "1 job/s, pool 2 workers"} {
		r, found := byName["reference: 200 ms CPU jobs beside /fast/"+name]
		if !ok || !found {
			continue
		}
		limit := fastP99Factor*base.Fast.P99 + fastP99Slack
		bars = append(bars, bar{
			Claim: fmt.Sprintf("%s: /fast p99 < %d× the only-/fast baseline + %v", name, fastP99Factor, fastP99Slack),
			Got:   fmt.Sprintf("%s ms (baseline %s ms)", ms(r.Fast.P99), ms(base.Fast.P99)),
			Holds: r.Fast.P99 < limit,
		})
	}

	for _, group := range groups {
		phases := overload[group]
		var client, server time.Duration
		for _, r := range phases {
			client, server = max(client, r.ShedTime.Max), max(server, r.ShedServer.Max)
		}
		bars = append(bars, bar{
			Claim: fmt.Sprintf("%s: Shed's 503s answered within %v", group, shedAnswerWithin),
			Got:   fmt.Sprintf("max %s ms at the client, %s ms in the server", ms(client), ms(server)),
			Holds: client < shedAnswerWithin && server < shedAnswerWithin,
		})
		if !strings.HasPrefix(group, "overload (c)") || len(phases) != len(overloadPhases) {
			continue
		}
		var good float64
		n := 0
		for i, r := range phases[:len(phases)-1] { // the last phase is the recovery
			if overloadPhases[i] >= 2 {
				good += r.Goodput
				n++
			}
		}
		good /= float64(n)
		bars = append(bars, bar{
			Claim: fmt.Sprintf("%s: goodput under overload ≥ %.0f%% of capacity", group, 100*goodputShare),
			Got:   fmt.Sprintf("%.1f jobs/s of %.1f", good, capacity),
			Holds: good >= goodputShare*capacity,
		})
		last := phases[len(phases)-1]
		bars = append(bars, bar{
			Claim: fmt.Sprintf("%s: recovers within %v of the overload's end", group, recoverWithin),
			Got:   ms(last.Recovered) + " ms",
			Holds: last.Recovered < recoverWithin,
		})
	}
	return bars
}

// printBars prints the bars after the table, a line each.
func printBars(w io.Writer, bars []bar) {
	if len(bars) == 0 {
		return
	}
	fmt.Fprintln(w, "\n== the reference page's bars, on this run (a busy machine misses them without a fault of offload's)")
	for _, b := range bars {
		verdict := "holds "
		if !b.Holds {
			verdict = "MISSED"
		}
		fmt.Fprintf(w, "%s  %s: %s\n", verdict, b.Claim, b.Got)
	}
}
