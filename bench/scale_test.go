package bench

import (
	"context"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/offloadgo/offload/pool"
)

// BenchmarkScale is how each pool uses every core: every pool has
// GOMAXPROCS workers, and -cpu sets GOMAXPROCS, so one run gives each
// shape at each core count with the peers side by side:
//
//	go test ./bench -run '^$' -bench Scale -benchmem -cpu 1,2,4,8,16 -count 3 | tee scale.txt
//	benchstat -col /peer scale.txt
//
// The shapes:
//   - shape=run: Run of a trivial task from 4×GOMAXPROCS callers, beside
//     ants, pond and the hand-written channel pool (the floor);
//   - shape=producer: scaleBatch tasks of ~12 µs of CPU submitted one by
//     one from one goroutine, then awaited (ns/task), beside ants, pond
//     and the ceiling: the same work split over GOMAXPROCS bare goroutines;
//   - shape=cpu-1ms and shape=trivial: Run from 4×GOMAXPROCS callers on an
//     InProcess pool, a Subprocess pool and a Remote pool of two node
//     processes (GOMAXPROCS slots between them), all on this machine.
func BenchmarkScale(b *testing.B) {
	b.Run("shape=run", benchScaleRun)
	b.Run("shape=producer", benchScaleProducer)
	ms := itersFor(time.Millisecond)
	b.Run("shape=cpu-1ms", func(b *testing.B) { benchScaleIsolations(b, ms, ms) })
	b.Run("shape=trivial", func(b *testing.B) { benchScaleIsolations(b, 0, ms) })
}

// scaleBatch is how many tasks shape=producer submits per op.
const scaleBatch = 20_000

// callers sets b's parallelism to 4×GOMAXPROCS callers.
func callers(b *testing.B) { b.SetParallelism(4) }

func benchScaleRun(b *testing.B) {
	ctx := context.Background()
	n := runtime.GOMAXPROCS(0)
	b.Run("peer=offload", func(b *testing.B) {
		p := newIsolated(b, pool.InProcess, pool.Options{Workers: n, MinWorkers: n, MaxQueue: pool.Unbounded})
		b.ReportAllocs()
		callers(b)
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
		p := newAnts(n)
		defer p.Release()
		b.ReportAllocs()
		callers(b)
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
	b.Run("peer=pond", func(b *testing.B) {
		p := newPond(n)
		defer p.StopAndWait()
		b.ReportAllocs()
		callers(b)
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
		p := newFloorPool(n, n*n, work)
		defer p.close()
		b.ReportAllocs()
		callers(b)
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

func benchScaleProducer(b *testing.B) {
	ctx := context.Background()
	n := runtime.GOMAXPROCS(0)
	iters := itersFor(12 * time.Microsecond)
	perTask := func(b *testing.B) {
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/scaleBatch, "ns/task")
	}
	b.Run("peer=offload", func(b *testing.B) {
		p := newIsolated(b, pool.InProcess, pool.Options{Workers: n, MinWorkers: n, MaxQueue: pool.Unbounded})
		futures := make([]*pool.Future[int], scaleBatch)
		b.ReportAllocs()
		for b.Loop() {
			for i := range futures {
				f, err := pool.Submit(ctx, p, cpuTask, iters)
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
		perTask(b)
	})
	b.Run("peer=ants", func(b *testing.B) {
		p := newAnts(n)
		defer p.Release()
		b.ReportAllocs()
		for b.Loop() {
			var wg sync.WaitGroup
			wg.Add(scaleBatch)
			for range scaleBatch {
				if err := p.Submit(func() { sink.Add(int64(burn(iters))); wg.Done() }); err != nil {
					b.Fatal(err)
				}
			}
			wg.Wait()
		}
		perTask(b)
	})
	b.Run("peer=pond", func(b *testing.B) {
		p := newPond(n)
		defer p.StopAndWait()
		b.ReportAllocs()
		for b.Loop() {
			var wg sync.WaitGroup
			wg.Add(scaleBatch)
			for range scaleBatch {
				if err := p.Go(func() { sink.Add(int64(burn(iters))); wg.Done() }); err != nil {
					b.Fatal(err)
				}
			}
			wg.Wait()
		}
		perTask(b)
	})
	b.Run("peer=ceiling", func(b *testing.B) {
		for b.Loop() {
			var wg sync.WaitGroup
			for w := range n {
				share := scaleBatch / n
				if w < scaleBatch%n {
					share++
				}
				wg.Go(func() {
					for range share {
						sink.Add(int64(burn(iters)))
					}
				})
			}
			wg.Wait()
		}
		perTask(b)
	})
}

// benchScaleIsolations runs burn(iters) from 4×GOMAXPROCS callers on
// pools of GOMAXPROCS workers in each isolation; ms is burn's rounds for
// a millisecond, to warm every worker up first.
func benchScaleIsolations(b *testing.B, iters, ms int) {
	ctx := context.Background()
	n := runtime.GOMAXPROCS(0)
	run := func(b *testing.B, p *pool.Pool) {
		warmEvery(b, p, n, 5*ms)
		b.ReportAllocs()
		callers(b)
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := pool.Run(ctx, p, cpuTask, iters); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	for _, iso := range isolations {
		b.Run("isolation="+iso.String(), func(b *testing.B) {
			run(b, newIsolated(b, iso, pool.Options{Workers: n, MinWorkers: n, MaxQueue: pool.Unbounded}))
		})
	}
	b.Run("isolation=Remote", func(b *testing.B) {
		// Two node processes; with one core, one node of one slot.
		nodes, slots := min(2, n), max(1, n/2)
		s, nc := remoteServer(b)
		run(b, startNodes(b, s, nc, "bench-scale", nodes, slots, nodes*slots))
	})
}

// warmEvery keeps all n workers of p busy at once, twice over, so that
// every worker process has started and served a call before the timing.
func warmEvery(b *testing.B, p *pool.Pool, n, iters int) {
	b.Helper()
	var wg sync.WaitGroup
	for range 2 * n {
		wg.Go(func() {
			if _, err := pool.Run(context.Background(), p, cpuTask, iters); err != nil {
				b.Error(err)
			}
		})
	}
	wg.Wait()
}
