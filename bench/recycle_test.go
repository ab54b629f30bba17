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
	for _, way := range []string{"none", "RecycleWorkers", "MaxTasksPerWorker"} {
		b.Run("way="+way, func(b *testing.B) {
			var slowestStart atomic.Int64
			o := pool.Options{Workers: workers, MinWorkers: workers, MaxQueue: 4 * workers,
				OnWorkerEvent: func(ev pool.WorkerEvent) {
					if ev.Kind == pool.WorkerStarted && ev.Replacing == pool.WorkerRecycled {
						atomicMax(&slowestStart, int64(ev.Took))
					}
				}}
			if way == "MaxTasksPerWorker" {
				o.Subprocess.MaxTasksPerWorker = 200 // the load brings each worker there in ~10 ms
			}
			p := newIsolated(b, pool.Subprocess, o)
			ctx := context.Background()
			for range 2 * workers { // every worker up
				if _, err := pool.Run(ctx, p, benchPID, struct{}{}); err != nil {
					b.Fatal(err)
				}
			}
			var stop atomic.Bool
			var slowestCall, failed atomic.Int64
			var load sync.WaitGroup
			for range workers {
				load.Go(func() {
					for !stop.Load() {
						begin := time.Now()
						if _, err := pool.Run(ctx, p, benchPID, struct{}{}); err != nil {
							failed.Add(1)
						}
						atomicMax(&slowestCall, int64(time.Since(begin)))
					}
				})
			}
			b.ResetTimer()
			for range b.N {
				switch way {
				case "none": // the load alone, for the slowest call of a quiet pool
					time.Sleep(25 * time.Millisecond)
				case "RecycleWorkers":
					if err := p.RecycleWorkers(ctx); err != nil {
						b.Fatal(err)
					}
				default:
					retireAll(b, p)
				}
			}
			b.StopTimer()
			stop.Store(true)
			load.Wait()
			b.ReportMetric(float64(slowestCall.Load())/1e6, "slowest-call-ms")
			b.ReportMetric(float64(slowestStart.Load())/1e6, "slowest-start-ms")
			b.ReportMetric(float64(p.Stats().WaitTime.Max)/1e6, "slowest-wait-ms")
			b.ReportMetric(float64(failed.Load()), "failed-calls")
		})
	}
}

// retireAll waits until MaxTasksPerWorker has retired as many processes
// as the pool has workers, the load driving them there.
func retireAll(b *testing.B, p *pool.Pool) {
	b.Helper()
	target := p.Stats().Recycled + workers
	for p.Stats().Recycled < target {
		time.Sleep(100 * time.Microsecond)
	}
}

func atomicMax(v *atomic.Int64, n int64) {
	for old := v.Load(); n > old && !v.CompareAndSwap(old, n); old = v.Load() {
	}
}
