package main

import (
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/offloadgo/offload/pool"
)

// The -sweep experiment: which QueueDelay settings a user of
// pool.DefaultQueueDelay would want. Each setting gets the overload phases
// against a one-worker pool whose queue holds sweepQueueSpan of work, with
// Shed in front on queue full only (no MaxWait), so that QueueDelay alone
// decides which admitted tasks wait and which are failed.
const sweepQueueSpan = 1600 * time.Millisecond

// sweepSetting is one QueueDelay under test, named for the table.
type sweepSetting struct {
	name  string
	delay pool.QueueDelay
}

// sweepSettings are the settings -sweep compares for jobs of jobTime:
// none, the paper's constants, and limits in drain times of one task (here
// the job's run time: one worker) above the paper's constants as floors,
// the shape of DefaultQueueDelay; last, DefaultQueueDelay itself.
func sweepSettings(jobTime time.Duration) []sweepSetting {
	paper := pool.QueueDelay{Target: 5 * time.Millisecond, Interval: 100 * time.Millisecond}
	out := []sweepSetting{{"off", pool.QueueDelay{}}, {"5ms/100ms (Fail at Scale)", paper}}
	for _, m := range []struct{ target, interval float64 }{{1, 4}, {2, 4}, {2, 8}} {
		d := paper
		d.TargetDrainTimes, d.IntervalDrainTimes = m.target, m.interval
		target, interval := max(d.Target, time.Duration(m.target*float64(jobTime))), max(d.Interval, time.Duration(m.interval*float64(jobTime)))
		out = append(out, sweepSetting{fmt.Sprintf("%g/%g drain times, floors 5ms/100ms (%v/%v)", m.target, m.interval, target, interval), d})
	}
	return append(out, sweepSetting{"pool.DefaultQueueDelay", pool.DefaultQueueDelay()})
}

// sweepScenarios are the overload scenarios of -sweep.
func sweepScenarios(jobTime time.Duration, overloadPool string) []scenario {
	maxQueue := max(1, int(math.Ceil(float64(sweepQueueSpan)/float64(jobTime))))
	var all []scenario
	for _, s := range sweepSettings(jobTime) {
		group := fmt.Sprintf("sweep %v jobs, MaxQueue %d: QueueDelay %s", jobTime, maxQueue, s.name)
		all = append(all, scenario{
			Group: group, Name: group, Mode: overloadPool, Phases: overloadPhases,
			Server: serverConfig{Pool: overloadPool, MaxQueue: maxQueue, Shed: true, QueueDelay: s.delay},
		})
	}
	return all
}

// printSweep prints one line per sweep setting: goodput as a share of
// capacity at each overload phase, the slowest accepted-job p99 of the
// overload phases, how many jobs were dropped (QueueDelay's 503s) or timed
// out while the load was within capacity, and the recovery time.
func printSweep(w io.Writer, rows []row, capacity float64) {
	type line struct {
		group string
		rows  []row
	}
	var lines []line
	for _, r := range rows {
		if !strings.HasPrefix(r.Group, "sweep ") {
			continue
		}
		if len(lines) == 0 || lines[len(lines)-1].group != r.Group {
			lines = append(lines, line{group: r.Group})
		}
		lines[len(lines)-1].rows = append(lines[len(lines)-1].rows, r)
	}
	if len(lines) == 0 {
		return
	}
	fmt.Fprintf(w, "\n== sweep summary: goodput as %% of capacity per phase; p99 job = slowest accepted-job p99 at 2x-10x;\n"+
		"   lost <=1x = jobs dropped by QueueDelay or timed out in the phases before the overload (of those sent);\n"+
		"   lag max = the latest the generator sent a request: over 50 ms the machine stalled and the line means little\n")
	cols := []string{"good 0.5x", "good 1x", "good 2x", "good 5x", "good 10x", "good back", "p99 job", "lost <=1x", "recover", "lag max"}
	width := 0
	for _, l := range lines {
		width = max(width, len(l.group))
	}
	printHeader(w, width, cols)
	for _, l := range lines {
		fmt.Fprintf(w, "%-*s", width, l.group)
		var cells []string
		var p99 time.Duration
		lost, sent := 0, 0
		recovered, lag := time.Duration(-1), time.Duration(0)
		beforeOverload := true
		for i, r := range l.rows {
			if r.NA != "" {
				continue
			}
			lag = max(lag, r.LagMax)
			cells = append(cells, fmt.Sprintf("%.0f%%", 100*r.Goodput/capacity))
			m := overloadPhases[min(i, len(overloadPhases)-1)]
			if m >= 2 && i < len(l.rows)-1 && r.Job.N > 0 {
				p99 = max(p99, r.Job.P99)
			}
			beforeOverload = beforeOverload && m <= 1
			if beforeOverload {
				lost += r.Dropped + r.Errors
				sent += r.Jobs
			}
			if r.Recovered >= 0 {
				recovered = r.Recovered
			}
		}
		for len(cells) < len(overloadPhases) {
			cells = append(cells, "-")
		}
		cells = append(cells, ms(p99), fmt.Sprintf("%d/%d", lost, sent), "-")
		if recovered >= 0 {
			cells[len(cells)-1] = ms(recovered)
		}
		cells = append(cells, ms(lag))
		if lag > stallLag {
			cells = append(cells, "(stalled machine: rerun)")
		}
		printCells(w, cells)
	}
}
