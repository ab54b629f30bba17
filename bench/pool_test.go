package bench

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/alitto/pond/v2"

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
func BenchmarkPoolRunParallel(b *testing.B) {
	ctx := context.Background()
	b.Run("peer=offload", func(b *testing.B) {
		p := newOffload(b, pool.Options{MinWorkers: workers})
		b.ReportAllocs()
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
		p := newAnts(workers)
		defer p.Release()
		b.ReportAllocs()
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
		p := newPond(workers)
		defer p.StopAndWait()
		b.ReportAllocs()
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
		p := newFloorPool(workers, workers*workers, work)
		defer p.close()
		b.ReportAllocs()
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
	runBatch(b, func(int) int { return 0 }, trivial, work)
}

// BenchmarkPoolBatch10us is the same with tasks of 10 µs of CPU each on 2
// workers; peer=ceiling is the same work split over two bare goroutines.
func BenchmarkPoolBatch10us(b *testing.B) {
	n := itersFor(10 * time.Microsecond)
	runBatch(b, func(int) int { return n }, cpuTask, burn)
	b.Run("peer=ceiling", func(b *testing.B) {
		for b.Loop() {
			var wg sync.WaitGroup
			for range workers {
				wg.Go(func() {
					for range batch / workers {
						sink.Add(int64(burn(n)))
					}
				})
			}
			wg.Wait()
		}
		reportPerTask(b)
	})
}

// runBatch runs one batch benchmark per peer; direct is what task does,
// for the peers that take a plain func.
func runBatch(b *testing.B, input func(int) int, task pool.Task[int, int], direct func(int) int) {
	ctx := context.Background()
	b.Run("peer=offload", func(b *testing.B) {
		p := newOffload(b, pool.Options{MinWorkers: workers, MaxQueue: pool.Unbounded})
		futures := make([]*pool.Future[int], batch)
		b.ReportAllocs()
		for b.Loop() {
			for i := range futures {
				f, err := pool.Submit(ctx, p, task, input(i))
				if err != nil {
					b.Fatal(err)
				}
				futures[i] = f
			}
			for _, f := range futures {
				if _, err := f.Wait(); err != nil {
					b.Fatal(err)
				}
			}
		}
		reportPerTask(b)
	})
	b.Run("peer=offload-blocking-auto-queue", func(b *testing.B) {
		p := newOffload(b, pool.Options{MinWorkers: workers})
		futures := make([]*pool.Future[int], batch)
		b.ReportAllocs()
		for b.Loop() {
			for i := range futures {
				f, err := pool.SubmitBlocking(ctx, p, task, input(i))
				if err != nil {
					b.Fatal(err)
				}
				futures[i] = f
			}
			for _, f := range futures {
				if _, err := f.Wait(); err != nil {
					b.Fatal(err)
				}
			}
		}
		reportPerTask(b)
	})
	b.Run("peer=pond-go-waitgroup", func(b *testing.B) {
		p := newPond(workers)
		defer p.StopAndWait()
		b.ReportAllocs()
		for b.Loop() {
			var wg sync.WaitGroup
			wg.Add(batch)
			for i := range batch {
				if err := p.Go(func() { sink.Add(int64(direct(input(i)))); wg.Done() }); err != nil {
					b.Fatal(err)
				}
			}
			wg.Wait()
		}
		reportPerTask(b)
	})
	b.Run("peer=pond-submit-waitgroup", func(b *testing.B) {
		p := newPond(workers)
		defer p.StopAndWait()
		b.ReportAllocs()
		for b.Loop() {
			var wg sync.WaitGroup
			wg.Add(batch)
			for i := range batch {
				p.Submit(func() { sink.Add(int64(direct(input(i)))); wg.Done() })
			}
			wg.Wait()
		}
		reportPerTask(b)
	})
	b.Run("peer=pond-result-futures", func(b *testing.B) {
		p := pond.NewResultPool[int](workers)
		defer p.StopAndWait()
		futures := make([]pond.ResultTask[int], batch)
		b.ReportAllocs()
		for b.Loop() {
			for i := range futures {
				futures[i] = p.Submit(func() int { return direct(input(i)) })
			}
			for _, f := range futures {
				if _, err := f.Wait(); err != nil {
					b.Fatal(err)
				}
			}
		}
		reportPerTask(b)
	})
	b.Run("peer=ants-waitgroup", func(b *testing.B) {
		p := newAnts(workers)
		defer p.Release()
		b.ReportAllocs()
		for b.Loop() {
			var wg sync.WaitGroup
			wg.Add(batch)
			for i := range batch {
				if err := p.Submit(func() { sink.Add(int64(direct(input(i)))); wg.Done() }); err != nil {
					b.Fatal(err)
				}
			}
			wg.Wait()
		}
		reportPerTask(b)
	})
	b.Run("peer=floor", func(b *testing.B) {
		p := newFloorPool(workers, 1024, direct)
		defer p.close()
		jobs := make([]floorJob, batch)
		for i := range jobs {
			jobs[i].done = make(chan struct{}, 1)
		}
		b.ReportAllocs()
		for b.Loop() {
			for i := range jobs {
				jobs[i].in = input(i)
				p.jobs <- &jobs[i]
			}
			for i := range jobs {
				<-jobs[i].done
			}
		}
		reportPerTask(b)
	})
}

func reportPerTask(b *testing.B) {
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/batch, "ns/task")
}
