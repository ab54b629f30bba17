package bench

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/offloadgo/offload/pool"
)

// Replacing every worker process under a steady load of calls, two ways:
// RecycleWorkers (each new process starts before the old one leaves) and
// the retire path of MaxTasksPerWorker (the old one leaves, then its
// successor starts), beside the same load with no replacement (none). One
// op replaces every worker (none: waits 25 ms); the metrics are the
// slowest call under it (from Run to its return), the longest a call
// waited for a worker (Stats.WaitTime.Max), the slowest start of a
// replacement, and the calls that failed:
//
//	go test ./bench -run '^$' -bench 'RecycleUnderLoad' -count 6 | tee recycle.txt
//	benchstat -col /way recycle.txt
func BenchmarkRecycleUnderLoad(b *testing.B) {
	for _, way := range replaceWays {
		b.Run("way="+way, func(b *testing.B) {
			starts := newStartWatch(workers)
			o := pool.Options{Workers: workers, MinWorkers: workers, MaxQueue: 4 * workers, OnWorkerEvent: starts.observe}
			if way == "MaxTasksPerWorker" {
				o.Subprocess.MaxTasksPerWorker = 200 // the load brings each worker there in ~10 ms
			}
			p := newIsolated(b, pool.Subprocess, o)
			benchReplaceUnderLoad(b, p, starts, way, func(ctx context.Context) error {
				_, err := pool.Run(ctx, p, benchPID, struct{}{})
				return err
			})
		})
	}
}

// replaceWays are the ways BenchmarkRecycleUnderLoad replaces workers.
var replaceWays = []string{"none", "RecycleWorkers", "MaxTasksPerWorker"}

// benchReplaceUnderLoad replaces p's workers way once per op under a
// steady load of call (replaceUnderLoad), and reports the slowest call,
// replacement start and wait, and the calls that failed.
func benchReplaceUnderLoad(b *testing.B, p *pool.Pool, starts *startWatch, way string, call func(context.Context) error) {
	slowestCall, failed := replaceUnderLoad(b, p, starts, way, call, b.Loop)
	b.ReportMetric(float64(slowestCall)/1e6, "slowest-call-ms")
	b.ReportMetric(float64(starts.slowest.Load())/1e6, "slowest-start-ms")
	b.ReportMetric(float64(p.Stats().WaitTime.Max)/1e6, "slowest-wait-ms")
	b.ReportMetric(float64(failed), "failed-calls")
}

// replaceUnderLoad waits for p's first workers (starts), then keeps one
// caller per worker calling call, back to back, while it replaces every
// worker way (replaceOnce) for as long as more says. It returns the
// slowest call under that load, from its start to its return, and how
// many failed.
func replaceUnderLoad(tb testing.TB, p *pool.Pool, starts *startWatch, way string, call func(context.Context) error,
	more func() bool) (slowestCall time.Duration, failed int64) {
	tb.Helper()
	starts.awaitFirst(tb)
	ctx := context.Background()
	for range 2 * workers { // warm
		if err := call(ctx); err != nil {
			tb.Fatal(err)
		}
	}
	var stop atomic.Bool
	var slowest, failures atomic.Int64
	var load sync.WaitGroup
	defer func() { // also when replaceOnce fails the benchmark
		stop.Store(true)
		load.Wait()
		slowestCall, failed = time.Duration(slowest.Load()), failures.Load()
	}()
	for range workers {
		load.Go(func() {
			for !stop.Load() {
				begin := time.Now()
				if err := call(ctx); err != nil {
					if failures.Add(1) == 1 {
						tb.Logf("a call failed under load (way %s): %v", way, err)
					}
				}
				atomicMax(&slowest, int64(time.Since(begin)))
			}
		})
	}
	for more() {
		replaceOnce(tb, p, way)
	}
	return 0, 0 // the deferred function sets them, once the load has stopped
}

// replaceOnce replaces each of p's workers way: none waits 25 ms instead
// (the load alone, for the slowest call of a quiet pool).
func replaceOnce(tb testing.TB, p *pool.Pool, way string) {
	tb.Helper()
	switch way {
	case "none":
		time.Sleep(25 * time.Millisecond)
	case "RecycleWorkers":
		if err := p.RecycleWorkers(context.Background()); err != nil {
			tb.Fatal(err)
		}
	case "MaxTasksPerWorker":
		retireAll(p)
	default:
		tb.Fatalf("no way %q", way)
	}
}

// retireAll waits until MaxTasksPerWorker has retired as many processes
// as the pool has workers, the load driving them there.
func retireAll(p *pool.Pool) {
	target := p.Stats().Recycled + workers
	for p.Stats().Recycled < target {
		time.Sleep(100 * time.Microsecond)
	}
}

// startWatch watches a pool's worker starts (its OnWorkerEvent is
// observe): the first n, and the slowest start of a replacement for a
// recycled worker.
type startWatch struct {
	n       int
	first   chan struct{} // a token per first start
	slowest atomic.Int64
}

func newStartWatch(n int) *startWatch { return &startWatch{n: n, first: make(chan struct{}, n)} }

func (s *startWatch) observe(ev pool.WorkerEvent) {
	if ev.Kind != pool.WorkerStarted {
		return
	}
	if ev.Replacing == 0 {
		select {
		case s.first <- struct{}{}:
		default:
		}
	}
	if ev.Replacing == pool.WorkerRecycled {
		atomicMax(&s.slowest, int64(ev.Took))
	}
}

// awaitFirst waits for the first n starts, so that no call waits for one
// (Stats.WaitTime.Max then counts the waits under load only).
func (s *startWatch) awaitFirst(tb testing.TB) {
	tb.Helper()
	timeout := time.After(time.Minute)
	for range s.n {
		select {
		case <-s.first:
		case <-timeout:
			tb.Fatalf("the pool's %d workers did not start within a minute", s.n)
		}
	}
}

func atomicMax(v *atomic.Int64, n int64) {
	for old := v.Load(); n > old && !v.CompareAndSwap(old, n); old = v.Load() {
	}
}
