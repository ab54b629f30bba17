package bench

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/offloadgo/offload/pool"
)

// Run all peers side by side in one run, e.g.
//
//	go test ./bench -run '^$' -bench 'Pool' -benchmem -count 6 | tee new.txt
//	benchstat -col /peer new.txt

const workers = 2

// work is the trivial task: too small to measure, so the pool's own cost
// is what the benchmark sees.
func work(x int) int { return x + 1 }

var (
	trivial = pool.Register("bench.trivial", func(_ context.Context, x int) (int, error) {
		return work(x), nil
	})
	// cpuTask burns n rounds of CPU (burn); itersFor(d) gives the n for d.
	cpuTask = pool.Register("bench.burn", func(_ context.Context, n int) (int, error) {
		return burn(n), nil
	})
)

// newOffload is an in-process pool of the benchmarks' workers.
func newOffload(b *testing.B, o pool.Options) *pool.Pool {
	b.Helper()
	return newIsolated(b, pool.InProcess, o)
}

// BenchmarkPoolRun is one submit-and-wait of a trivial task at a time.
func BenchmarkPoolRun(b *testing.B) {
	ctx := context.Background()
	b.Run("peer=offload", func(b *testing.B) {
		p := newOffload(b, pool.Options{MinWorkers: workers})
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if _, err := pool.Run(ctx, p, trivial, i); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("peer=offload-cancellable-ctx", func(b *testing.B) {
		p := newOffload(b, pool.Options{MinWorkers: workers})
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if _, err := pool.Run(ctx, p, trivial, i); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("peer=offload-submit-cancellable-ctx", func(b *testing.B) {
		// Submit and Wait: the pool watches the ctx, which Run leaves to
		// its caller.
		p := newOffload(b, pool.Options{MinWorkers: workers})
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			f, err := pool.Submit(ctx, p, trivial, i)
			if err == nil {
				_, err = f.Wait()
			}
			if err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("peer=offload-func", func(b *testing.B) {
		// A closure (RunFunc), as ants and pond take one, rather than a
		// registered task: what the closure costs on top of Run.
		p := newOffload(b, pool.Options{MinWorkers: workers})
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if _, err := pool.RunFunc(ctx, p, func(context.Context) (int, error) { return work(i), nil }); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("peer=ants", func(b *testing.B) {
		p := newAnts(workers)
		defer p.Release()
		done := make(chan int, 1)
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if err := p.Submit(func() { done <- work(i) }); err != nil {
				b.Fatal(err)
			}
			<-done
		}
	})
	b.Run("peer=pond-future", func(b *testing.B) {
		p := newPond(workers)
		defer p.StopAndWait()
		b.ReportAllocs()
		var out int
		for i := 0; b.Loop(); i++ {
			if err := p.Submit(func() { out = work(i) }).Wait(); err != nil {
				b.Fatal(err)
			}
		}
		_ = out
	})
	b.Run("peer=floor", func(b *testing.B) {
		p := newFloorPool(workers, workers*workers, work)
		defer p.close()
		j := &floorJob{done: make(chan struct{}, 1)}
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			j.in = i
			p.jobs <- j
			<-j.done
		}
	})
}

// BenchmarkPoolRunParallel is submit-and-wait from GOMAXPROCS goroutines.
func BenchmarkPoolRunParallel(b *testing.B) { runParallelPeers(b, workers, 1) }

// runParallelPeers runs Run of the trivial task from parallelism×GOMAXPROCS
// goroutines on each peer, every pool with workerCount workers (perCore:
// GOMAXPROCS).
func runParallelPeers(b *testing.B, workerCount, parallelism int) {
	ctx := context.Background()
	b.Run("peer=offload", func(b *testing.B) {
		n := poolSize(workerCount)
		p := newOffload(b, pool.Options{Workers: n, MinWorkers: n, MaxQueue: pool.Unbounded})
		b.SetParallelism(parallelism)
		timed(b, n)
		b.RunParallel(func(pb *testing.PB) {
			for i := 0; pb.Next(); i++ {
				if _, err := pool.Run(ctx, p, trivial, i); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
	b.Run("peer=ants", func(b *testing.B) {
		n := poolSize(workerCount)
		p := newAnts(n)
		defer p.Release()
		b.SetParallelism(parallelism)
		timed(b, n)
		b.RunParallel(func(pb *testing.PB) {
			done := make(chan int, 1)
			for i := 0; pb.Next(); i++ {
				if err := p.Submit(func() { done <- work(i) }); err != nil {
					b.Error(err)
					return
				}
				<-done
			}
		})
	})
	b.Run("peer=pond-future", func(b *testing.B) {
		n := poolSize(workerCount)
		p := newPond(n)
		defer p.StopAndWait()
		b.SetParallelism(parallelism)
		timed(b, n)
		b.RunParallel(func(pb *testing.PB) {
			for i := 0; pb.Next(); i++ {
				if err := p.Submit(func() { _ = work(i) }).Wait(); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
	b.Run("peer=floor", func(b *testing.B) {
		n := poolSize(workerCount)
		p := newFloorPool(n, n*n, work)
		defer p.close()
		b.SetParallelism(parallelism)
		timed(b, n)
		b.RunParallel(func(pb *testing.PB) {
			j := &floorJob{done: make(chan struct{}, 1)}
			for i := 0; pb.Next(); i++ {
				j.in = i
				p.jobs <- j
				<-j.done
			}
		})
	})
}

// batch is how many tasks the throughput benchmarks submit, then await.
const batch = 100_000

// BenchmarkPoolBatch submits 100,000 trivial tasks, then awaits them all.
// ns/op is for the whole batch; ns/task is the figure to compare.
func BenchmarkPoolBatch(b *testing.B) {
	runBatch(b, workers, batch, func(int) int { return 0 }, trivial, work)
}

// BenchmarkPoolBatch10us is the same with tasks of 10 µs of CPU each on 2
// workers; peer=ceiling is the same work split over two bare goroutines.
func BenchmarkPoolBatch10us(b *testing.B) {
	n := itersFor(10 * time.Microsecond)
	runBatch(b, workers, batch, func(int) int { return n }, cpuTask, burn)
	b.Run("peer=ceiling", func(b *testing.B) { runCeiling(b, workers, batch, func() int { return burn(n) }) })
}

// runCeiling is the ceiling of a batch: size calls of work split evenly
// over workerCount bare goroutines (perCore: GOMAXPROCS).
func runCeiling(b *testing.B, workerCount, size int, work func() int) {
	n := poolSize(workerCount)
	timed(b, n)
	for range b.N {
		var wg sync.WaitGroup
		for w := range n {
			share := size / n
			if w < size%n {
				share++
			}
			wg.Go(func() {
				for range share {
					sink.Add(int64(work()))
				}
			})
		}
		wg.Wait()
	}
	reportPerTask(b, size)
}

func reportPerTask(b *testing.B, size int) {
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(size), "ns/task")
}
