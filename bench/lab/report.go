package main

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"
)

// row is one line of the lab's table.
type row struct {
	Group, Name string
	NA          string // "n/a: why" when the scenario could not run

	Offered float64 // jobs per second offered (overload rows)
	Fast    dist    // /fast latencies (P99: the median of the runs' p99s)
	Job     dist    // latencies of jobs answered 200

	Runs                 int           // measured runs (reference rows repeat; overload rows run once)
	FastP99Lo, FastP99Hi time.Duration // the lowest and highest p99 of /fast over the runs

	Jobs      int           // jobs sent
	Shed      int           // jobs Shed answered 503 before the handler ran
	ShedTime  dist          // client-side latency of those 503s, from the intended send time
	ShedSent  dist          // the same from the actual send: without the generator's own lag
	Dropped   int           // jobs answered 503 after admission: failed by QueueDelay, or the queue filled first
	ShedNoRA  int           // 503s (either kind) without Retry-After
	Errors    int           // jobs that failed otherwise: timeouts, 5xx, resets
	Accepted  int           // durable jobs answered 202: not ended within Accept's WaitFor
	Goodput   float64       // jobs answered 200 per second of the window
	Recovered time.Duration // last phase: when the last bad job answer came, since the phase began; -1 not measured

	Goroutines int
	HeapMiB    float64
	RunP50     time.Duration // the pool's median job run time, server side

	// Where a 503's time goes (overload rows): Shed's 503s timed on the
	// server, both processes' goroutine scheduling latency, and how late
	// the generator sent its requests.
	ShedServer     dist
	SchedServer    schedDist
	SchedClient    schedDist
	LagP99, LagMax time.Duration

	// The readiness probe's answers (saturated rows): their latency from
	// the intended send, and how many said 200, said 503, or came too late
	// (or not at all) for the probe's timeout.
	Probe                           dist
	ProbeReady, ProbeNot, ProbeLost int
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
		r.Runs = max(o.Runs, 1)
		r.Goodput /= float64(r.Runs) // the window is one run's, the samples every run's
		r.Fast.P99, r.FastP99Lo, r.FastP99Hi = medianP99(o.Samples, r.Runs)
		if n := len(o.Stats); n > 0 {
			last := o.Stats[n-1]
			r.Goroutines, r.HeapMiB, r.RunP50 = last.Goroutines, float64(last.HeapInuse)/(1<<20), last.RunP50
			r.SchedServer = medianSched(o.Stats)
		}
		o.Rows = []row{r}
		return
	}
	for i, m := range sc.Phases {
		from := time.Duration(i) * st.Phase
		r := window(o.Samples, from, from+st.Phase, true)
		r.Group, r.Name, r.Offered = sc.Group, rowName(sc, i), m*sc.capacity(st.JobTime)
		r.Recovered = -1
		if i == len(sc.Phases)-1 {
			r.Recovered = recovery(o.Samples, from, st.JobTime)
		}
		r.Runs = 1
		if i < len(o.Stats) {
			s := o.Stats[i]
			r.Goroutines, r.HeapMiB, r.RunP50 = s.Goroutines, float64(s.HeapInuse)/(1<<20), s.RunP50
			r.ShedServer, r.SchedServer = s.Shed, s.Sched
		}
		if i < len(o.Client) {
			r.SchedClient = o.Client[i]
		}
		o.Rows = append(o.Rows, r)
	}
}

// medianP99 is the median over runs of each run's /fast p99, and the
// lowest and highest of them. With an even number of runs the median is
// the upper middle one, which errs towards the slower run.
func medianP99(samples []sample, runs int) (median, lo, hi time.Duration) {
	perRun := make([][]time.Duration, runs)
	for _, s := range samples {
		if s.Stream == "fast" && s.Run >= 0 && s.Run < runs {
			perRun[s.Run] = append(perRun[s.Run], s.Latency)
		}
	}
	var p99s []time.Duration
	for _, ls := range perRun {
		if len(ls) > 0 {
			p99s = append(p99s, summarizeDist(ls).P99)
		}
	}
	if len(p99s) == 0 {
		return 0, 0, 0
	}
	slices.Sort(p99s)
	return p99s[len(p99s)/2], p99s[0], p99s[len(p99s)-1]
}

// medianSched is the server's scheduling latency of the run whose p99 is
// the median, as the row's /fast p99 is: one stall of the shared machine
// moves one run, not the row.
func medianSched(stats []serverStats) schedDist {
	runs := make([]schedDist, 0, len(stats))
	for _, s := range stats {
		if s.Sched.N > 0 {
			runs = append(runs, s.Sched)
		}
	}
	if len(runs) == 0 {
		return schedDist{}
	}
	slices.SortFunc(runs, func(a, b schedDist) int { return cmp.Compare(a.P99, b.P99) })
	return runs[len(runs)/2]
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
	var fast, job, shed, shedSent, lags, probes []time.Duration
	good := 0
	for _, s := range samples {
		if byAnswer && s.Stream == "job" && s.Status == 200 && s.At+s.Latency >= from && s.At+s.Latency < to {
			good++
		}
		if s.At < from || s.At >= to {
			continue
		}
		lags = append(lags, s.Lag)
		if s.Stream == "ready" {
			probes = append(probes, s.Latency)
			switch s.Status {
			case 200:
				r.ProbeReady++
			case 503:
				r.ProbeNot++
			default:
				r.ProbeLost++
			}
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
			if s.Shed {
				r.Shed++
				shed = append(shed, s.Latency)
				shedSent = append(shedSent, s.Latency-s.Lag)
			} else {
				r.Dropped++
			}
			if !s.Retry {
				r.ShedNoRA++
			}
		case 202:
			r.Accepted++
		default:
			r.Errors++
		}
	}
	r.Fast, r.Job, r.ShedTime, r.ShedSent = summarizeDist(fast), summarizeDist(job), summarizeDist(shed), summarizeDist(shedSent)
	r.Probe = summarizeDist(probes)
	lag := summarizeDist(lags)
	r.LagP99, r.LagMax = lag.P99, lag.Max
	if !byAnswer {
		good = len(job)
	}
	r.Goodput = float64(good) / (to - from).Seconds()
	return r
}

// recovery is how long after from the last bad job answer (not 200, or
// slower than four jobs' time, or than 100 ms for short jobs) arrived, for
// jobs sent from then on; 0 when every job sent after from was answered
// well. Four, not one or two: fresh Poisson arrivals at 0.5x capacity
// queue one or two behind each other often, but seldom four, while the
// backlog left by an overload makes them wait far longer or time out.
func recovery(samples []sample, from, jobTime time.Duration) time.Duration {
	slow := max(4*jobTime, 100*time.Millisecond)
	var last time.Duration
	for _, s := range samples {
		if s.Stream != "job" || s.At < from {
			continue
		}
		if s.Status != 200 || s.Latency > slow {
			last = max(last, s.At+s.Latency-from)
		}
	}
	return last
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
