//go:build unix

package chunking

import (
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// requireCPUClock returns at once: every Unix has the CPU-time clocks.
func requireCPUClock(testing.TB) {}

// processCPU returns the CPU time of the whole process, all threads.
func processCPU() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(clockProcessCPU, &ts); err != nil {
		panic("chunking: process CPU clock: " + err.Error()) // every Unix has it
	}
	return time.Duration(ts.Nano())
}

// threadCPU returns the calling thread's CPU time; callers lock the
// goroutine to its thread around the measurement.
func threadCPU() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(clockThreadCPU, &ts); err != nil {
		panic("chunking: thread CPU clock: " + err.Error()) // every Unix has it
	}
	return time.Duration(ts.Nano())
}
