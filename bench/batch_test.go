package bench

import (
	"context"
	"sync"
	"testing"

	"github.com/alitto/pond/v2"

	"github.com/offloadgo/offload/pool"
)

// submitOne is pool.Submit or pool.SubmitBlocking for the batch shapes.
type submitOne func(context.Context, *pool.Pool, pool.Task[int, int], int) (*pool.Future[int], error)

// runBatch runs one batch benchmark per peer: size tasks submitted one by
// one from one goroutine, then awaited, on pools of workerCount workers
// (perCore: GOMAXPROCS); direct is what task does, for the peers that
// take a plain func.
func runBatch(b *testing.B, workerCount, size int, input func(int) int, task pool.Task[int, int], direct func(int) int) {
	do := func(i int) { sink.Add(int64(direct(input(i)))) }
	b.Run("peer=offload", func(b *testing.B) {
		offloadBatch(b, workerCount, size, pool.Options{MaxQueue: pool.Unbounded}, pool.Submit[int, int], task, input)
	})
	b.Run("peer=offload-blocking-auto-queue", func(b *testing.B) {
		offloadBatch(b, workerCount, size, pool.Options{}, pool.SubmitBlocking[int, int], task, input)
	})
	b.Run("peer=pond-go-waitgroup", func(b *testing.B) {
		waitGroupBatches(b, workerCount, size, do, func(n int) (submitFunc, func()) {
			p := newPond(n)
			return p.Go, p.StopAndWait
		})
	})
	b.Run("peer=pond-submit-waitgroup", func(b *testing.B) {
		waitGroupBatches(b, workerCount, size, do, func(n int) (submitFunc, func()) {
			p := newPond(n)
			return func(f func()) error { p.Submit(f); return nil }, p.StopAndWait
		})
	})
	b.Run("peer=pond-result-futures", func(b *testing.B) {
		n := poolSize(workerCount)
		p := pond.NewResultPool[int](n)
		defer p.StopAndWait()
		futures := make([]pond.ResultTask[int], size)
		timedBatches(b, n, size, func() {
			for i := range futures {
				futures[i] = p.Submit(func() int { return direct(input(i)) })
			}
			for _, f := range futures {
				if _, err := f.Wait(); err != nil {
					b.Fatal(err)
				}
			}
		})
	})
	b.Run("peer=ants-waitgroup", func(b *testing.B) {
		waitGroupBatches(b, workerCount, size, do, func(n int) (submitFunc, func()) {
			p := newAnts(n)
			return p.Submit, p.Release
		})
	})
	b.Run("peer=floor", func(b *testing.B) {
		n := poolSize(workerCount)
		p := newFloorPool(n, 1024, direct)
		defer p.close()
		jobs := make([]floorJob, size)
		for i := range jobs {
			jobs[i].done = make(chan struct{}, 1)
		}
		timedBatches(b, n, size, func() {
			for i := range jobs {
				jobs[i].in = input(i)
				p.jobs <- &jobs[i]
			}
			for i := range jobs {
				<-jobs[i].done
			}
		})
	})
}

// offloadBatch is runBatch's offload peer: a pool of workerCount workers
// (the rest of its options from o) taking size tasks one submit call each,
// then awaited.
func offloadBatch(b *testing.B, workerCount, size int, o pool.Options, submit submitOne, task pool.Task[int, int], input func(int) int) {
	ctx := context.Background()
	n := poolSize(workerCount)
	o.Workers, o.MinWorkers = n, n
	p := newOffload(b, o)
	futures := make([]*pool.Future[int], size)
	timedBatches(b, n, size, func() {
		for i := range futures {
			f, err := submit(ctx, p, task, input(i))
			if err != nil {
				b.Fatal(err)
			}
			futures[i] = f
		}
		awaitAll(b, futures)
	})
}

// submitFunc hands a plain func to a peer's pool.
type submitFunc func(func()) error

// waitGroupBatches is runBatch's shape for the peers that take a plain
// func: start makes the pool of workerCount workers (perCore: GOMAXPROCS)
// and returns its submit and stop; each op hands it size calls of do(i),
// then a WaitGroup awaits them.
func waitGroupBatches(b *testing.B, workerCount, size int, do func(int), start func(n int) (submitFunc, func())) {
	n := poolSize(workerCount)
	submit, stop := start(n)
	defer stop()
	timedBatches(b, n, size, func() {
		var wg sync.WaitGroup
		wg.Add(size)
		for i := range size {
			if err := submit(func() { do(i); wg.Done() }); err != nil {
				b.Fatal(err)
			}
		}
		wg.Wait()
	})
}

// timedBatches times b.N calls of op on a pool of n workers and reports
// ns/task for the size tasks each op runs.
func timedBatches(b *testing.B, n, size int, op func()) {
	timed(b, n)
	for range b.N {
		op()
	}
	reportPerTask(b, size)
}

// awaitAll waits for every future, ending the benchmark on an error.
func awaitAll(b *testing.B, futures []*pool.Future[int]) {
	for _, f := range futures {
		if _, err := f.Wait(); err != nil {
			b.Fatal(err)
		}
	}
}
