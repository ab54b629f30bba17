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
// order, on one locked thread, and the metrics compare the pair.
// overhead-cpu-% compares the thread's CPU time (the chunker's own cost:
// clock reads, strides, yields; not the time other goroutines or processes
// ran), overhead-wall-% the wall-clock time. ns/op covers both runs.
func BenchmarkOverhead(b *testing.B) {
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
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
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
		c, w := threadCPU(), time.Now()
		run()
		*wall += time.Since(w)
		*cpu += threadCPU() - c
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
	b.ReportMetric(100*(float64(budgetCPU)/float64(plainCPU)-1), "overhead-cpu-%")
	b.ReportMetric(100*(float64(budgetWall)/float64(plainWall)-1), "overhead-wall-%")
}
