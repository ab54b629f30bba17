package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// row is one line of the lab's table.
type row struct {
	Group, Name string
	NA          string // "n/a: why" when the scenario could not run

	Offered float64 // jobs per second offered (overload rows)
	Fast    dist    // /fast latencies
	Job     dist    // latencies of jobs answered 200

	Jobs      int           // jobs sent
	Shed      int           // jobs answered 503
	ShedNoRA  int           // 503s without Retry-After
	ShedMax   time.Duration // the slowest 503
	Errors    int           // jobs that failed otherwise: timeouts, 5xx, resets
	Goodput   float64       // jobs answered 200 per second of the window
	Recovered time.Duration // last phase: when the last bad job answer came, since the phase began; -1 not measured

	Goroutines int
	HeapMiB    float64
	RunP50     time.Duration // the pool's median job run time, server side
}

// dist is a latency summary.
type dist struct {
	N             int
	P50, P99, Max time.Duration
}

func summarizeDist(ls []time.Duration) dist {
	if len(ls) == 0 {
		return dist{}
	}
	slices.Sort(ls)
	q := func(p float64) time.Duration { return ls[min(len(ls)-1, int(p*float64(len(ls))))] }
	return dist{N: len(ls), P50: q(0.50), P99: q(0.99), Max: ls[len(ls)-1]}
}

// summarize turns an outcome into its table rows: one for a reference
// scenario, one per phase for an overload scenario.
func summarize(o *outcome, st settings) {
	sc := o.Scenario
	if o.NA != "" {
		o.Rows = []row{{Group: sc.Group, Name: rowName(sc, -1), NA: "n/a: " + o.NA, Recovered: -1}}
		return
	}
	if sc.Phases == nil {
		r := window(o.Samples, 0, o.Length, false)
		r.Group, r.Name, r.Recovered = sc.Group, rowName(sc, -1), -1
		if len(o.Stats) > 0 {
			r.Goroutines, r.HeapMiB, r.RunP50 = o.Stats[0].Goroutines, float64(o.Stats[0].HeapInuse)/(1<<20), o.Stats[0].RunP50
		}
		o.Rows = []row{r}
		return
	}
	for i, m := range sc.Phases {
		from := time.Duration(i) * st.Phase
		r := window(o.Samples, from, from+st.Phase, true)
		r.Group, r.Name, r.Offered = sc.Group, rowName(sc, i), m*capacity(st.JobTime)
		r.Recovered = -1
		if i == len(sc.Phases)-1 {
			r.Recovered = recovery(o.Samples, from, st.JobTime)
		}
		if i < len(o.Stats) {
			r.Goroutines, r.HeapMiB, r.RunP50 = o.Stats[i].Goroutines, float64(o.Stats[i].HeapInuse)/(1<<20), o.Stats[i].RunP50
		}
		o.Rows = append(o.Rows, r)
	}
}

func rowName(sc scenario, phase int) string {
	if phase < 0 {
		return sc.Name
	}
	return fmt.Sprintf("%gx capacity", sc.Phases[phase])
}

// window summarizes the samples sent in [from, to). Goodput counts the
// jobs sent in the window, or with byAnswer those answered 200 in it:
// under overload what was sent in a phase is not what was done in it.
func window(samples []sample, from, to time.Duration, byAnswer bool) row {
	var r row
	var fast, job []time.Duration
	good := 0
	for _, s := range samples {
		if byAnswer && s.Stream == "job" && s.Status == 200 && s.At+s.Latency >= from && s.At+s.Latency < to {
			good++
		}
		if s.At < from || s.At >= to {
			continue
		}
		if s.Stream == "fast" {
			fast = append(fast, s.Latency) // a failed /fast counts with its latency too
			continue
		}
		r.Jobs++
		switch s.Status {
		case 200:
			job = append(job, s.Latency)
		case 503:
			r.Shed++
			r.ShedMax = max(r.ShedMax, s.Latency)
			if !s.Retry {
				r.ShedNoRA++
			}
		default:
			r.Errors++
		}
	}
	r.Fast, r.Job = summarizeDist(fast), summarizeDist(job)
	if !byAnswer {
		good = len(job)
	}
	r.Goodput = float64(good) / (to - from).Seconds()
	return r
}

// recovery is how long after from the last bad job answer (not 200, or
// slower than two jobs' time) arrived, for jobs sent from then on; 0 when
// every job sent after from was answered well.
func recovery(samples []sample, from, jobTime time.Duration) time.Duration {
	var last time.Duration
	for _, s := range samples {
		if s.Stream != "job" || s.At < from {
			continue
		}
		if s.Status != 200 || s.Latency > 2*jobTime {
			last = max(last, s.At+s.Latency-from)
		}
	}
	return last
}

// header and format print the table; every latency is in milliseconds.
var columns = []string{"p50 fast", "p99 fast", "max fast", "p50 job", "p99 job", "max job", "jobs", "503s", "503 max", "errors", "goodput/s", "gor", "heap MiB", "run p50", "recover"}

func printTable(w io.Writer, rows []row) {
	const nameWidth = 34
	group := ""
	for _, r := range rows {
		if r.Group != group {
			group = r.Group
			fmt.Fprintf(w, "\n== %s\n", group)
			fmt.Fprintf(w, "%-*s", nameWidth, "")
			for _, c := range columns {
				fmt.Fprintf(w, " %9s", c)
			}
			fmt.Fprintln(w)
		}
		name := r.Name
		if r.Offered > 0 {
			name = fmt.Sprintf("%s (%.1f jobs/s)", r.Name, r.Offered)
		}
		fmt.Fprintf(w, "%-*s", nameWidth, name)
		if r.NA != "" {
			fmt.Fprintf(w, " %s\n", r.NA)
			continue
		}
		cells := []string{
			ms(r.Fast.P50), ms(r.Fast.P99), ms(r.Fast.Max),
			msIf(r.Job.N, r.Job.P50), msIf(r.Job.N, r.Job.P99), msIf(r.Job.N, r.Job.Max),
			fmt.Sprint(r.Jobs), fmt.Sprint(r.Shed), msIf(r.Shed, r.ShedMax), fmt.Sprint(r.Errors),
			fmt.Sprintf("%.1f", r.Goodput), fmt.Sprint(r.Goroutines), fmt.Sprintf("%.1f", r.HeapMiB), msIf(int(r.RunP50), r.RunP50), "",
		}
		if r.Recovered >= 0 {
			cells[len(cells)-1] = ms(r.Recovered)
		}
		if r.ShedNoRA > 0 {
			cells[7] += fmt.Sprintf("(%d no Retry-After)", r.ShedNoRA)
		}
		for _, c := range cells {
			fmt.Fprintf(w, " %9s", c)
		}
		fmt.Fprintln(w)
	}
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

// slug names a scenario's files.
func slug(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		default:
			if b.Len() > 0 && !strings.HasSuffix(b.String(), "-") {
				b.WriteByte('-')
			}
		}
	}
	return strings.TrimSuffix(b.String(), "-")
}
