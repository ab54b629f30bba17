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
// Metrics: maxblock-ms is the longest block seen in the run; over-bound-%
// the share of blocks longer than bound-ms; p50block-ms the median block.
// Blocks are wall-clock time, so on a loaded machine a block also counts
// the time the OS gave the thread's core to someone else: over-bound-% tells
// such outliers (a few blocks) from a real overrun (most blocks).
//
// Compare with: benchstat -col /check
func BenchmarkUneven(b *testing.B) {
	const budgetD = 5 * time.Millisecond
	inputs := []struct {
		name  string
		items []time.Duration
	}{
		{"mixed", mixedItems()},
		{"uniform20us", uniformItems(5000, 20*time.Microsecond)},
	}
	for _, in := range inputs {
		bound := budgetD + maxOf(in.items)
		b.Run("items="+in.name+"/check=adaptive", func(b *testing.B) {
			var blocks []time.Duration
			for range b.N {
				blocks = append(blocks, adaptiveBlocks(b, in.items, budgetD)...)
			}
			reportBlocks(b, blocks, bound)
		})
		b.Run("items="+in.name+"/check=every1000", func(b *testing.B) {
			var blocks []time.Duration
			for range b.N {
				blocks = append(blocks, everyThousand(in.items, spinFor, budgetD)...)
			}
			reportBlocks(b, blocks, bound)
		})
	}
}

// adaptiveBlocks runs items through a budget.Stepper, yielding before each
// chunk as Each does, and returns every chunk's length.
func adaptiveBlocks(b *testing.B, items []time.Duration, d time.Duration) []time.Duration {
	s, err := budget.NewStepper(len(items), func(i int) { spinFor(items[i]) }, budget.Options{Budget: d})
	if err != nil {
		b.Fatal(err)
	}
	var blocks []time.Duration
	runtime.Gosched()
	for c, err := range s.Chunks(context.Background()) {
		if err != nil {
			b.Fatal(err)
		}
		blocks = append(blocks, c.Took)
		runtime.Gosched()
	}
	if rep := s.Report(); rep.Items != len(items) || rep.MaxBlock != slices.Max(blocks) {
		b.Fatalf("report %+v disagrees with the chunks seen", rep)
	}
	return blocks
}

func reportBlocks(b *testing.B, blocks []time.Duration, bound time.Duration) {
	slices.Sort(blocks)
	over := len(blocks) - sortFind(blocks, bound)
	b.ReportMetric(ms(blocks[len(blocks)-1]), "maxblock-ms")
	b.ReportMetric(ms(blocks[len(blocks)/2]), "p50block-ms")
	b.ReportMetric(100*float64(over)/float64(len(blocks)), "over-bound-%")
	b.ReportMetric(ms(bound), "bound-ms")
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
