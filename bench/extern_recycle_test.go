package bench

import (
	"context"
	"fmt"
	"testing"

	"github.com/offloadgo/offload/pool"
)

// BenchmarkExternRecycleUnderLoad is BenchmarkRecycleUnderLoad on a pool
// of Python workers (sdk/testdata/worker.py), whose callers run "echo":
// every worker replaced once per op under a steady load of calls,
// by RecycleWorkers or MaxTasksPerWorker's retire path, beside no
// replacement (none).
//
// Target (issue 37), for RecycleWorkers: failed-calls 0, and no call
// waits longer than about one worker start: slowest-call-ms (Run to
// return; an echo itself takes tens of µs, so this is its wait) at most
// about slowest-start-ms. (slowest-wait-ms, Stats.WaitTime.Max, counts
// waits in the queue only: a call handed to a worker whose process is
// starting counts in RunTime, as MaxTasksPerWorker's rows show.)
//
//	go test ./bench -run '^$' -bench 'ExternRecycleUnderLoad' -count 6 | tee xrecycle.txt
//	benchstat -col /way xrecycle.txt
func BenchmarkExternRecycleUnderLoad(b *testing.B) {
	python := languages[0]
	for _, way := range replaceWays {
		b.Run("way="+way, func(b *testing.B) {
			p, starts := newRecyclingProgramPool(b, python, way)
			benchReplaceUnderLoad(b, p, starts, way, echoOn(p))
		})
	}
}

// newRecyclingProgramPool is a pool of workers of l's test worker, with
// a startWatch, for replaceUnderLoad's way.
func newRecyclingProgramPool(tb testing.TB, l language, way string) (*pool.Pool, *startWatch) {
	starts := newStartWatch(workers)
	o := pool.Options{Workers: workers, MaxQueue: 4 * workers, OnWorkerEvent: starts.observe}
	if way == "MaxTasksPerWorker" {
		o.Subprocess.MaxTasksPerWorker = 200 // the load brings each worker there in tens of ms
	}
	return newProgramPool(tb, l.Command(tb, l.Worker), o), starts
}

// echoOn is one call of "echo" on p, checked.
func echoOn(p *pool.Pool) func(context.Context) error {
	return func(ctx context.Context) error {
		in := echoIO{Text: "under load", N: 7}
		out, err := pool.Run(ctx, p, xEcho, in)
		if err == nil && out != in {
			err = fmt.Errorf("echo of %+v returned %+v", in, out)
		}
		return err
	}
}
