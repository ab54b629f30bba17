package bench

import (
	"testing"
	"time"
)

// cpuFrom starts a count of the CPU time the process and its worker
// processes run; report reports it as cpu-ns/op of b. Call it after the
// warm-up: `defer cpuFrom(b).report(b)`. On a busy machine it shows what
// wall time can't: the work a call costs on both sides of the pipe.
// Workers are counted only while alive. Not measured off Linux.
func cpuFrom(b *testing.B) cpuCount {
	start, ok := treeCPU(b)
	return cpuCount{start, ok}
}

type cpuCount struct {
	start time.Duration
	ok    bool
}

func (c cpuCount) report(b *testing.B) {
	end, ok := treeCPU(b)
	if c.ok && ok && b.N > 0 {
		b.ReportMetric(float64(end-c.start)/float64(b.N), "cpu-ns/op")
	}
}
