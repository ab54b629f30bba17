package bench

import (
	"runtime"
	"testing"
)

// perCore, given as the number of workers to the helpers that run peers
// side by side, means one worker per GOMAXPROCS as the leaf benchmark
// runs (see poolSize).
const perCore = 0

// poolSize is the number of workers a leaf benchmark gives its pools for
// workerCount: perCore is GOMAXPROCS, read now. Only a leaf may read it.
// go test -cpu sets GOMAXPROCS around each leaf's measured runs, not
// around the parents that define the leaves: a parent runs once, before
// that, so a count read there is whatever GOMAXPROCS was then (the
// default, or an earlier benchmark's last row) at every -cpu row
// (golang/go#49980).
func poolSize(workerCount int) int {
	if workerCount == perCore {
		return runtime.GOMAXPROCS(0)
	}
	return workerCount
}

// timed starts a leaf's timing once its setup is done, so that starting
// pools, worker processes and nodes is not timed, and reports the leaf's
// pool size as its workers metric (after the reset, which would delete
// it), so that each row of a run shows it. Leaves run at other GOMAXPROCS
// than their parent's loop their b.N, never b.Loop: a b.Loop benchmark is
// timed in its first call, which go test makes before it sets GOMAXPROCS
// for the first -cpu row (golang/go#49980 again).
func timed(b *testing.B, workers int) {
	b.ReportAllocs()
	b.ResetTimer()
	b.ReportMetric(float64(workers), "workers")
}
