package bench

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/alitto/pond/v2"

	"github.com/offloadgo/offload/pool"
)

// BenchmarkScale is how each pool uses every core: every pool has
// GOMAXPROCS workers, and -cpu sets GOMAXPROCS, so one run gives each
// shape at each core count with the peers side by side (each leaf reads
// GOMAXPROCS itself and loops b.N: see poolSize and timed for why):
//
//	go test ./bench -run '^$' -bench Scale -benchmem -cpu 1,2,4,8,16 -count 3 | tee scale.txt
//	benchstat -col /peer scale.txt
//
// On a borrowed machine without Go, scale.sh (beside this file) runs it
// from test binaries built here, several commits' round after round.
//
// The shapes:
//   - shape=run: Run of a trivial task from 4×GOMAXPROCS callers, beside
//     ants, pond and the hand-written channel pool (the floor);
//   - shape=producer: scaleBatch tasks of ~12 µs of CPU submitted one by
//     one from one goroutine, then awaited (ns/task), beside the peers of
//     BenchmarkPoolBatch and the ceiling: the same work split over
//     GOMAXPROCS bare goroutines;
//   - shape=batch: the same tasks submitted as one batch (pool.SubmitAll,
//     pond's task group), then awaited, beside the same ceiling;
//   - shape=cpu-1ms and shape=trivial: Run from 4×GOMAXPROCS callers on an
//     InProcess pool, a Subprocess pool and a Remote pool of two node
//     processes (GOMAXPROCS slots between them), all on this machine.
func BenchmarkScale(b *testing.B) {
	b.Run("shape=run", benchScaleRun)
	b.Run("shape=producer", benchScaleProducer)
	b.Run("shape=batch", benchScaleBatch)
	ms := itersFor(time.Millisecond)
	b.Run("shape=cpu-1ms", func(b *testing.B) { benchScaleIsolations(b, ms, ms) })
	b.Run("shape=trivial", func(b *testing.B) { benchScaleIsolations(b, 0, ms) })
}

// scaleBatch is how many tasks shape=producer submits per op.
const scaleBatch = 20_000

// callers sets b's parallelism to 4×GOMAXPROCS callers.
func callers(b *testing.B) { b.SetParallelism(4) }

func benchScaleRun(b *testing.B) { runParallelPeers(b, perCore, 4) }

func benchScaleProducer(b *testing.B) {
	iters := itersFor(12 * time.Microsecond)
	runBatch(b, perCore, scaleBatch, func(int) int { return iters }, cpuTask, burn)
	b.Run("peer=ceiling", func(b *testing.B) { runCeiling(b, perCore, scaleBatch, func() int { return burn(iters) }) })
}

// benchScaleBatch is shape=producer with the tasks handed over as one
// batch. offload's SubmitAll admits the batch at once; pond's task group
// takes many tasks in one call but admits them one by one; ants has no
// batch submission.
func benchScaleBatch(b *testing.B) {
	ctx := context.Background()
	iters := itersFor(12 * time.Microsecond)
	ins := make([]int, scaleBatch)
	for i := range ins {
		ins[i] = iters
	}
	b.Run("peer=offload", func(b *testing.B) {
		n := poolSize(perCore)
		p := newOffload(b, pool.Options{Workers: n, MinWorkers: n, MaxQueue: pool.Unbounded})
		timedBatches(b, n, scaleBatch, func() {
			futures, err := pool.SubmitAll(ctx, p, cpuTask, ins)
			if err != nil {
				b.Fatal(err)
			}
			awaitAll(b, futures)
		})
	})
	b.Run("peer=pond-group", func(b *testing.B) {
		n := poolSize(perCore)
		p := pond.NewResultPool[int](n)
		defer p.StopAndWait()
		tasks := make([]func() int, scaleBatch)
		for i := range tasks {
			tasks[i] = func() int { return burn(ins[i]) }
		}
		timedBatches(b, n, scaleBatch, func() {
			if _, err := p.NewGroup().Submit(tasks...).Wait(); err != nil {
				b.Fatal(err)
			}
		})
	})
	b.Run("peer=ceiling", func(b *testing.B) { runCeiling(b, perCore, scaleBatch, func() int { return burn(iters) }) })
}

// benchScaleIsolations runs burn(iters) from 4×GOMAXPROCS callers on
// pools of GOMAXPROCS workers in each isolation (the Remote pool's slots
// are GOMAXPROCS rounded down to even, one with one core); ms is burn's
// rounds for a millisecond, to warm every worker up first.
func benchScaleIsolations(b *testing.B, iters, ms int) {
	ctx := context.Background()
	run := func(b *testing.B, p *pool.Pool, n int) {
		warmEvery(b, p, n, 5*ms)
		callers(b)
		timed(b, n)
		defer cpuFrom(b).report(b)
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
			n := poolSize(perCore)
			run(b, newIsolated(b, iso, pool.Options{Workers: n, MinWorkers: n, MaxQueue: pool.Unbounded}), n)
		})
	}
	b.Run("isolation=Remote", func(b *testing.B) {
		// Two node processes; with one core, one node of one slot.
		n := poolSize(perCore)
		nodes, slots := min(2, n), max(1, n/2)
		s, nc := remoteServer(b)
		run(b, startNodes(b, s, nc, "bench-scale", nodes, slots, nodes*slots), nodes*slots)
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
