package chunking

import (
	"context"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/offloadgo/offload/budget"
)

// BenchmarkUneven runs items of wildly uneven cost with a 5 ms budget and
// looks at every block (the time between two yields) against the bound the
// chunker promises: the budget plus one item (bound-ms: the budget plus the
// most expensive item). check=adaptive is budget's chunker (a Stepper
// ranged with runtime.Gosched between chunks: Each's loop, but with every
// chunk's length visible); check=every1000 is the reference page's loop,
// which reads the clock every 1,000 items.
//
//   - items=mixed: 20,000 items of 1 µs with 10 of 3 ms at random places.
//   - items=uniform20us: 5,000 items of 20 µs, where 1,000 items between
//     clock reads are already 20 ms.
//
// bound-ms is the budget plus the most expensive item plus one clock-read
// interval (Budget/100): the cheap items that ran after a slow one in the
// same stride, before the clock could see it.
//
// Metrics: maxblock-ms is the longest block seen in the run, over-bound-%
// the share of blocks longer than bound-ms, p50block-ms the median block,
// all in wall-clock time, which is what a waiter sees. On a loaded machine a
// wall-clock block also counts the time the OS gave the core to another
// process, so maxcpu-ms and cpu-over-bound-% measure the same blocks in the
// thread's CPU time (the goroutine is locked to its thread): that is the
// chunker's own overrun, free of the machine's noise.
//
// Compare with: benchstat -col /check
func BenchmarkUneven(b *testing.B) {
	requireCPUClock(b)
	const budgetD = 5 * time.Millisecond
	inputs := []struct {
		name  string
		items []time.Duration
	}{
		{"mixed", mixedItems()},
		{"uniform20us", uniformItems(5000, 20*time.Microsecond)},
	}
	for _, in := range inputs {
		bound := budgetD + maxOf(in.items) + budgetD/100
		b.Run("items="+in.name+"/check=adaptive", func(b *testing.B) {
			var wall, cpu []time.Duration
			for range b.N {
				w, c := adaptiveBlocks(b, in.items, budgetD)
				wall, cpu = append(wall, w...), append(cpu, c...)
			}
			reportBlocks(b, wall, cpu, bound)
		})
		b.Run("items="+in.name+"/check=every1000", func(b *testing.B) {
			var wall, cpu []time.Duration
			for range b.N {
				w, c := everyThousand(in.items, spinFor, budgetD)
				wall, cpu = append(wall, w...), append(cpu, c...)
			}
			reportBlocks(b, wall, cpu, bound)
		})
	}
}

// adaptiveBlocks runs items through a budget.Stepper, yielding before each
// chunk as Each does, and returns every chunk's length in wall-clock and in
// thread CPU time.
func adaptiveBlocks(b *testing.B, items []time.Duration, d time.Duration) (wall, cpu []time.Duration) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	s, err := budget.NewStepper(len(items), func(i int) { spinFor(items[i]) }, budget.Options{Budget: d})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	for more := true; more; {
		runtime.Gosched()
		before := threadCPU()
		if more, err = s.Step(ctx); err != nil {
			b.Fatal(err)
		}
		cpu = append(cpu, threadCPU()-before)
		wall = append(wall, s.Last().Took)
	}
	if rep := s.Report(); rep.Items != len(items) || rep.MaxBlock != slices.Max(wall) {
		b.Fatalf("report %+v disagrees with the chunks seen", rep)
	}
	return wall, cpu
}

func reportBlocks(b *testing.B, wall, cpu []time.Duration, bound time.Duration) {
	slices.Sort(wall)
	slices.Sort(cpu)
	b.ReportMetric(ms(wall[len(wall)-1]), "maxblock-ms")
	b.ReportMetric(ms(wall[len(wall)/2]), "p50block-ms")
	b.ReportMetric(overShare(wall, bound), "over-bound-%")
	b.ReportMetric(ms(cpu[len(cpu)-1]), "maxcpu-ms")
	b.ReportMetric(overShare(cpu, bound), "cpu-over-bound-%")
	b.ReportMetric(ms(bound), "bound-ms")
}

// overShare returns the percentage of sorted blocks longer than bound.
func overShare(sorted []time.Duration, bound time.Duration) float64 {
	return 100 * float64(len(sorted)-sortFind(sorted, bound)) / float64(len(sorted))
}

// sortFind returns the number of sorted blocks at or under bound.
func sortFind(sorted []time.Duration, bound time.Duration) int {
	i, _ := slices.BinarySearch(sorted, bound+1)
	return i
}

// mixedItems is 20,000 items of 1 µs with 10 of 3 ms at fixed random
// places.
func mixedItems() []time.Duration {
	items := uniformItems(20_000, time.Microsecond)
	rng := rand.New(rand.NewPCG(1, 2))
	for range 10 {
		items[rng.IntN(len(items))] = 3 * time.Millisecond
	}
	return items
}

func uniformItems(n int, d time.Duration) []time.Duration {
	items := make([]time.Duration, n)
	for i := range items {
		items[i] = d
	}
	return items
}

func maxOf(items []time.Duration) time.Duration {
	return slices.Max(items)
}
