package bench

import (
	"runtime"
	"sync/atomic"
	"time"
)

var sink atomic.Int64

// burn spins n rounds of a small integer hash: CPU work that the compiler
// cannot remove.
func burn(n int) int {
	x := uint64(n) | 1
	for range n {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
	}
	return int(x & 1)
}

// itersFor calibrates burn to about d of CPU on this machine. It times
// burn by the CPU clock of its thread where there is one, so that a busy
// machine, which delays burn without making it longer, does not shrink
// the work (and two binaries run back to back get the same).
func itersFor(d time.Duration) int {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	n := 1000
	for {
		start := calibrationClock()
		sink.Add(int64(burn(n)))
		if el := calibrationClock() - start; el > 20*time.Millisecond {
			return max(1, int(float64(n)*float64(d)/float64(el)))
		}
		n *= 2
	}
}
