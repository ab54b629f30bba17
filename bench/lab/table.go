package main

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// columns of the main table; every latency is in milliseconds. srvsch p99
// is how long the server's goroutines sat runnable before they ran: when it
// tracks /fast's p99, the server was short of Ps; when it stays low while
// p99 rises, the delay is outside the server's Go scheduler (its threads
// waiting for a core, or the load generator).
var columns = []string{"p50 fast", "p99 fast", "p99 range", "max fast", "p50 job", "p99 job", "max job",
	"jobs", "503s", "503 max", "dropped", "errors", "goodput/s", "gor", "heap MiB", "run p50", "srvsch p99", "recover", "note"}

// stallLag is how late the generator must send a request for a row to be
// marked: the load generator itself did not run, so the whole machine was
// busy elsewhere and the row says little about offload.
const stallLag = 50 * time.Millisecond

// printTable prints one section per group, then where Shed's 503s spent
// their time.
func printTable(w io.Writer, rows []row) {
	nameWidth := 0
	for _, r := range rows {
		nameWidth = max(nameWidth, len(displayName(r)))
	}
	group := ""
	for _, r := range rows {
		if r.Group != group {
			group = r.Group
			fmt.Fprintf(w, "\n== %s\n", group)
			printHeader(w, nameWidth, columns)
		}
		fmt.Fprintf(w, "%-*s", nameWidth, displayName(r))
		if r.NA != "" {
			fmt.Fprintf(w, " %s\n", r.NA)
			continue
		}
		p99Range := ""
		if r.Runs > 1 {
			p99Range = ms(r.FastP99Lo) + "-" + ms(r.FastP99Hi)
		}
		cells := []string{
			ms(r.Fast.P50), ms(r.Fast.P99), p99Range, ms(r.Fast.Max),
			msIf(r.Job.N, r.Job.P50), msIf(r.Job.N, r.Job.P99), msIf(r.Job.N, r.Job.Max),
			fmt.Sprint(r.Jobs), fmt.Sprint(r.Shed), msIf(r.Shed, r.ShedTime.Max), fmt.Sprint(r.Dropped), fmt.Sprint(r.Errors),
			fmt.Sprintf("%.1f", r.Goodput), fmt.Sprint(r.Goroutines), fmt.Sprintf("%.1f", r.HeapMiB), msIf(int(r.RunP50), r.RunP50),
			msIf(int(r.SchedServer.N), r.SchedServer.P99), "",
		}
		if r.Recovered >= 0 {
			cells[len(cells)-1] = ms(r.Recovered)
		}
		if r.LagMax > stallLag {
			cells = append(cells, "stalled: a request sent "+ms(r.LagMax)+" ms late")
		}
		if r.Accepted > 0 {
			cells = append(cells, fmt.Sprintf("%d answered 202", r.Accepted))
		}
		if r.ShedNoRA > 0 {
			cells[8] += fmt.Sprintf("(%d no Retry-After)", r.ShedNoRA)
		}
		printCells(w, cells)
	}
	printShedTimes(w, rows)
	printProbes(w, rows)
}

// probeColumns: the readiness probe's answers, as its client saw them
// (intended send to answer; "late" is no answer within probeTimeout).
var probeColumns = []string{"probes", "200", "503", "late", "p50", "p99", "max"}

func printProbes(w io.Writer, rows []row) {
	nameWidth := 0
	for _, r := range rows {
		nameWidth = max(nameWidth, len(shortGroup(r.Group)+" "+displayName(r)))
	}
	header := false
	for _, r := range rows {
		if r.NA != "" || r.Probe.N == 0 {
			continue
		}
		if !header {
			header = true
			fmt.Fprintf(w, "\n== the readiness probe (pool.Ready, MaxLag as the row's Shed, %v without; with ShedCPU, its slots too), asked %d times a second; late = no answer within %v\n", readyLag, probeRate, probeTimeout)
			printHeader(w, nameWidth, probeColumns)
		}
		fmt.Fprintf(w, "%-*s", nameWidth, shortGroup(r.Group)+" "+displayName(r))
		printCells(w, []string{fmt.Sprint(r.Probe.N), fmt.Sprint(r.ProbeReady), fmt.Sprint(r.ProbeNot), fmt.Sprint(r.ProbeLost),
			ms(r.Probe.P50), ms(r.Probe.P99), ms(r.Probe.Max)})
	}
}

// shedColumns: Shed's 503s as the client saw them (cli: intended send to
// answer read; sent: actual send to answer read), as the server saw them
// (Shed entered to 503 flushed), how long goroutines sat runnable in the
// server and the client (srvsch, clisch), and how late the generator sent
// its requests (lag; its timers sleep in the netpoller with a millisecond
// granularity when the process is idle).
var shedColumns = []string{"503s", "cli p50", "cli p99", "cli max", "sent p99", "sent max", "srv p50", "srv p99", "srv max",
	"srvsch p99", "srvsch max", "clisch p99", "clisch max", "lag p99", "lag max"}

func printShedTimes(w io.Writer, rows []row) {
	nameWidth := 0
	for _, r := range rows {
		nameWidth = max(nameWidth, len(shortGroup(r.Group)+" "+displayName(r)))
	}
	header := false
	for _, r := range rows {
		if r.NA != "" || r.Shed == 0 {
			continue
		}
		if !header {
			header = true
			fmt.Fprintf(w, "\n== where Shed's 503s spend their time: cli = intended send to answer, sent = actual send to answer, srv = Shed entered to 503 flushed;\n"+
				"   srvsch/clisch = goroutines' runnable-to-running wait in the server/client process; lag = how late the client sent (all requests)\n")
			printHeader(w, nameWidth, shedColumns)
		}
		fmt.Fprintf(w, "%-*s", nameWidth, shortGroup(r.Group)+" "+displayName(r))
		printCells(w, []string{
			fmt.Sprint(r.Shed), ms(r.ShedTime.P50), ms(r.ShedTime.P99), ms(r.ShedTime.Max), ms(r.ShedSent.P99), ms(r.ShedSent.Max),
			msIf(r.ShedServer.N, r.ShedServer.P50), msIf(r.ShedServer.N, r.ShedServer.P99), msIf(r.ShedServer.N, r.ShedServer.Max),
			msIf(int(r.SchedServer.N), r.SchedServer.P99), msIf(int(r.SchedServer.N), r.SchedServer.Max),
			msIf(int(r.SchedClient.N), r.SchedClient.P99), msIf(int(r.SchedClient.N), r.SchedClient.Max),
			ms(r.LagP99), ms(r.LagMax),
		})
	}
}

func displayName(r row) string {
	if r.Offered > 0 {
		return fmt.Sprintf("%s (%.1f jobs/s)", r.Name, r.Offered)
	}
	return r.Name
}

// shortGroup is "overload (c)" for "overload (c): MaxQueue ...", and
// "sweep off" for "sweep 200ms jobs, MaxQueue 8: QueueDelay off".
func shortGroup(g string) string {
	if _, setting, ok := strings.Cut(g, "QueueDelay "); ok && strings.HasPrefix(g, "sweep ") {
		return "sweep " + setting
	}
	short, _, _ := strings.Cut(g, ":")
	return short
}

func printHeader(w io.Writer, nameWidth int, cols []string) {
	fmt.Fprintf(w, "%-*s", nameWidth, "")
	printCells(w, cols)
}

func printCells(w io.Writer, cells []string) {
	for _, c := range cells {
		fmt.Fprintf(w, " %9s", c)
	}
	fmt.Fprintln(w)
}

func ms(d time.Duration) string {
	v := float64(d) / float64(time.Millisecond)
	switch {
	case v < 10:
		return fmt.Sprintf("%.2f", v)
	case v < 100:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.0f", v)
}

func msIf(n int, d time.Duration) string {
	if n == 0 {
		return "-"
	}
	return ms(d)
}
