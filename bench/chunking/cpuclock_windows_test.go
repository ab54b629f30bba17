package chunking

import (
	"testing"
	"time"
)

// requireCPUClock skips tb: the benchmarks report CPU time per block, and
// Windows has no per-thread CPU clock with the resolution they need
// (GetThreadTimes counts in scheduler ticks of about 15 ms).
func requireCPUClock(tb testing.TB) {
	tb.Helper()
	tb.Skip("needs CLOCK_THREAD_CPUTIME_ID and CLOCK_PROCESS_CPUTIME_ID, which Windows lacks")
}

// processCPU is never reached on Windows: requireCPUClock skips first.
func processCPU() time.Duration { return 0 }

// threadCPU is never reached on Windows: requireCPUClock skips first.
func threadCPU() time.Duration { return 0 }
