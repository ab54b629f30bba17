package chunking

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/offloadgo/offload/budget"
)

const referenceItems = 2_000_000

// BenchmarkReference is the reference page's experiment in Go: 2,000,000
// items of a small float loop, run in one go ("plain") or with a 5 ms
// budget, under GOMAXPROCS=1 and the default. ns/op is the total time;
// worst-gap-ms is the longest a 1 ms ticker goroutine went without running
// (the worst over the ops of one benchmark run); maxblock-ms is the longest
// the work held its goroutine without yielding (for plain: the whole loop).
//
// Compare the modes with: benchstat -col /mode
func BenchmarkReference(b *testing.B) {
	items := make([]float64, referenceItems)
	for i := range items {
		items[i] = float64(i % 1000)
	}
	defaultProcs := runtime.GOMAXPROCS(0)
	for _, procs := range []int{1, defaultProcs} {
		for _, mode := range []string{"plain", "budget"} {
			b.Run(fmt.Sprintf("procs=%d/mode=%s", procs, mode), func(b *testing.B) {
				withProcs(procs, func() { runReference(b, items, mode == "budget") })
			})
		}
	}
}

func runReference(b *testing.B, items []float64, chunked bool) {
	var worstGap, maxBlock time.Duration
	var acc float64
	fn := func(x float64) { acc += floatWork(x) }
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		tk := startTicker()
		b.StartTimer()
		if chunked {
			rep, err := budget.Each(context.Background(), items, fn, budget.Options{Budget: 5 * time.Millisecond})
			if err != nil {
				b.Fatal(err)
			}
			maxBlock = max(maxBlock, rep.MaxBlock)
		} else {
			start := time.Now()
			for _, x := range items {
				fn(x)
			}
			maxBlock = max(maxBlock, time.Since(start))
		}
		b.StopTimer()
		worstGap = max(worstGap, tk.halt())
		b.StartTimer()
	}
	sink = acc
	b.ReportMetric(ms(worstGap), "worst-gap-ms")
	b.ReportMetric(ms(maxBlock), "maxblock-ms")
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
