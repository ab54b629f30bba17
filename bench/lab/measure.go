package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"
)

// measured is what one measured run produced.
type measured struct {
	samples []sample
	length  time.Duration
	server  []serverStats // at each phase end (overload), or at the end
	client  []schedDist   // the generator's scheduling latencies, at the same times
}

// measure offers one run of sc's load to the warmed-up server at base and
// returns its samples, with the server's /stats and the generator's own
// scheduling latencies sampled at each phase end (or at the end).
func measure(ctx context.Context, g *generator, base string, st settings, sc scenario, run int, clientSched *schedWatch, progress func(string)) measured {
	plan, length := planFor(st, sc, run)
	m := measured{length: length}
	phase, phases := time.Duration(0), 0
	if sc.Phases != nil {
		phase, phases = st.Phase, len(sc.Phases)
	}
	sampleStats(ctx, g.client, base, nil, time.Now(), 0, 0) // start the server's counters from here
	clientSched.since()
	start := time.Now()
	statsDone := make(chan struct{})
	sampleAll := func() {
		defer close(statsDone)
		m.server = sampleStats(ctx, g.client, base, func() { m.client = append(m.client, clientSched.since()) }, start, phase, phases)
	}
	if phases > 0 {
		go sampleAll()
	}
	runLabel := ""
	if st.Repeat > 1 && sc.Phases == nil {
		runLabel = fmt.Sprintf(" run %d/%d", run+1, st.Repeat)
	}
	g.run(ctx, start, plan, func(el time.Duration, sent map[string]int) {
		progress(fmt.Sprintf("%s%s: %4.1fs/%.1fs  sent %d /fast, %d jobs", sc.label(), runLabel, el.Seconds(), length.Seconds(), sent["fast"], sent["job"]))
	})
	if phases == 0 {
		sampleAll()
	}
	<-statsDone
	m.samples = g.take()
	return m
}

// planFor is run's schedule of requests, sorted by time, and its length:
// Poisson /fast traffic (the same sequence for every scenario, one per run
// index) plus evenly spaced jobs, or Poisson jobs at each overload phase's
// rate.
func planFor(st settings, sc scenario, run int) ([]arrival, time.Duration) {
	rng := rand.New(rand.NewPCG(st.Seed, 2+uint64(run)))
	jobPath := "/job?mode=" + sc.Mode
	var plan []arrival
	length := st.Duration
	if sc.Phases == nil {
		plan = poisson(plan, rng, st.Rate, 0, length, "fast", "/fast")
		plan = evenly(plan, sc.JobsPerSec, 0, length, "job", jobPath)
	} else {
		length = time.Duration(len(sc.Phases)) * st.Phase
		plan = poisson(plan, rng, st.Rate, 0, length, "fast", "/fast")
		jobs := rand.New(rand.NewPCG(st.Seed, 1000+uint64(run)))
		for i, m := range sc.Phases {
			from := time.Duration(i) * st.Phase
			plan = poisson(plan, jobs, m*sc.capacity(st.JobTime), from, from+st.Phase, "job", jobPath)
		}
	}
	if sc.Server.ReadyLag > 0 {
		probes := rand.New(rand.NewPCG(st.Seed, 2000+uint64(run)))
		plan = poisson(plan, probes, probeRate, 0, length, "ready", "/readyz")
	}
	slices.SortFunc(plan, func(a, b arrival) int { return int(a.at - b.at) })
	return plan, length
}
