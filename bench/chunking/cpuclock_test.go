package chunking

import (
	"testing"
	"time"

	"github.com/offloadgo/offload/bench/internal/cpuclock"
)

// requireCPUClock skips tb where the CPU-time clocks count in scheduler
// ticks (Windows: about 15 ms), too coarse for the CPU time per block
// the benchmarks report.
func requireCPUClock(tb testing.TB) {
	tb.Helper()
	if !cpuclock.Fine {
		tb.Skip("needs fine CPU-time clocks (CLOCK_THREAD_CPUTIME_ID, CLOCK_PROCESS_CPUTIME_ID), which this platform lacks")
	}
}

// processCPU returns the CPU time of the whole process, all threads;
// only after requireCPUClock, which skips where it could fail.
func processCPU() time.Duration { return must(cpuclock.Process()) }

// threadCPU returns the calling thread's CPU time; callers lock the
// goroutine to its thread around the measurement. Only after
// requireCPUClock.
func threadCPU() time.Duration { return must(cpuclock.Thread()) }

func must(d time.Duration, err error) time.Duration {
	if err != nil {
		panic("chunking: CPU clock: " + err.Error()) // requireCPUClock skipped where it fails
	}
	return d
}
