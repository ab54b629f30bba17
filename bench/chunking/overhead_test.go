package chunking

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/offloadgo/offload/budget"
)

// BenchmarkOverhead measures what the chunker costs over the plain loop on
// the reference workload, in a form that survives a noisy machine: each op
// runs the plain loop and budget.Each (5 ms) back to back, in alternating
// order, and the metrics compare the pair as budget / plain: cpu-ratio in
// the process's CPU time (the chunker's own cost, clock reads, strides and
// yields, with whatever runtime work they cause; not the time other
// processes took the cores), wall-ratio in wall-clock time. 1.02 is the
// 2% bar. ns/op covers both runs.
func BenchmarkOverhead(b *testing.B) {
	requireCPUClock(b)
	items := make([]float64, referenceItems)
	for i := range items {
		items[i] = float64(i % 1000)
	}
	for _, procs := range []int{1, runtime.GOMAXPROCS(0)} {
		b.Run(fmt.Sprintf("procs=%d", procs), func(b *testing.B) {
			withProcs(procs, func() { runOverhead(b, items) })
		})
	}
}

func runOverhead(b *testing.B, items []float64) {
	var acc float64
	fn := func(x float64) { acc += floatWork(x) }
	plain := func() {
		for _, x := range items {
			fn(x)
		}
	}
	chunked := func() {
		if _, err := budget.Each(context.Background(), items, fn, budget.Options{Budget: 5 * time.Millisecond}); err != nil {
			b.Fatal(err)
		}
	}
	var plainCPU, budgetCPU, plainWall, budgetWall time.Duration
	measure := func(run func(), cpu, wall *time.Duration) {
		c, w := processCPU(), time.Now()
		run()
		*wall += time.Since(w)
		*cpu += processCPU() - c
	}
	for i := range b.N {
		if i%2 == 0 {
			measure(plain, &plainCPU, &plainWall)
			measure(chunked, &budgetCPU, &budgetWall)
		} else {
			measure(chunked, &budgetCPU, &budgetWall)
			measure(plain, &plainCPU, &plainWall)
		}
	}
	sink = acc
	b.ReportMetric(float64(budgetCPU)/float64(plainCPU), "cpu-ratio")
	b.ReportMetric(float64(budgetWall)/float64(plainWall), "wall-ratio")
}
