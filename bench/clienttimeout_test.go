package bench

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/offloadgo/offload/pool"
)

// Client timeouts against a Subprocess pool (issue 23 item 5): what do
// callers that give up cost the pool in worker processes? Before and
// after, in one run (the "before" binary built from an older commit with
// this file copied in):
//
//	go test ./bench -run '^$' -bench 'SubprocessClientTimeout' -benchmem -count 6 | tee timeout.txt
//	benchstat timeout.txt

// honour50ms takes 50 ms unless its ctx ends first, and then returns at
// once: a task that honours its ctx.
var honour50ms = pool.Register("bench.honour-50ms", func(ctx context.Context, _ int) (int, error) {
	select {
	case <-time.After(50 * time.Millisecond):
		return 1, nil
	case <-ctx.Done():
		return 0, ctx.Err()
	}
})

// BenchmarkSubprocessClientTimeout runs a Subprocess pool of 2 workers
// and 2 callers, each calling honour50ms in a loop with a 20 ms timeout:
// every call times out, and the task returns as soon as its worker
// process cancels its ctx. One op is one call. restarts/op is how many
// worker processes were started to replace another (killed, crashed or
// recycled) per call, restarts/s the same per second of the run; call
// latency is from Run to its return, terminated/op the share of calls
// that were running when their caller gave up (ErrTerminated), the rest
// having timed out before their task was sent (or, rarely, on a busy
// machine whose timers fire late, completed/op: they got their result). Without a grace a cancel
// kills at once; with one, a task that returns within it keeps its
// process.
func BenchmarkSubprocessClientTimeout(b *testing.B) {
	for _, grace := range []time.Duration{0, 100 * time.Millisecond} {
		b.Run("grace="+grace.String(), func(b *testing.B) {
			var restarts atomic.Int64
			p := newIsolated(b, pool.Subprocess, pool.Options{Workers: 2, MinWorkers: 2,
				Subprocess: pool.SubprocessOptions{TerminateGrace: grace},
				OnWorkerEvent: func(ev pool.WorkerEvent) {
					if ev.Kind == pool.WorkerStarted && ev.Replacing != 0 {
						restarts.Add(1)
					}
				}})
			warmUp(b, p)
			const callers = 2
			var (
				mu         sync.Mutex
				latencies  []time.Duration
				terminated int
				completed  int
				next       atomic.Int64
				wg         sync.WaitGroup
				failure    atomic.Pointer[error]
			)
			before := restarts.Load()
			b.ResetTimer()
			start := time.Now()
			for range callers {
				wg.Go(func() {
					var mine []time.Duration
					var ended, done int
					for next.Add(1) <= int64(b.N) {
						ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
						t0 := time.Now()
						_, err := pool.Run(ctx, p, honour50ms, 0)
						mine = append(mine, time.Since(t0))
						cancel()
						switch {
						case errors.Is(err, pool.ErrTerminated):
							ended++
						case errors.Is(err, context.DeadlineExceeded):
						case err == nil:
							// On a busy machine the caller's timer can
							// fire after the task's: the result is in.
							done++
						default:
							err = fmt.Errorf("a call that should time out returned %v", err)
							failure.CompareAndSwap(nil, &err)
							return
						}
					}
					mu.Lock()
					latencies = append(latencies, mine...)
					terminated += ended
					completed += done
					mu.Unlock()
				})
			}
			wg.Wait()
			elapsed := time.Since(start)
			b.StopTimer()
			if err := failure.Load(); err != nil {
				b.Fatal(*err)
			}
			n := float64(restarts.Load() - before)
			b.ReportMetric(n/float64(b.N), "restarts/op")
			b.ReportMetric(n/elapsed.Seconds(), "restarts/s")
			b.ReportMetric(float64(terminated)/float64(b.N), "terminated/op")
			b.ReportMetric(float64(completed)/float64(b.N), "completed/op")
			reportQuantiles(b, latencies, "call")
		})
	}
}
