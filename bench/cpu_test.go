package bench

import (
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

// itersFor calibrates burn to about d of CPU on this machine.
func itersFor(d time.Duration) int {
	n := 1000
	for {
		start := time.Now()
		sink.Add(int64(burn(n)))
		if el := time.Since(start); el > 20*time.Millisecond {
			return max(1, int(float64(n)*float64(d)/float64(el)))
		}
		n *= 2
	}
}
