package orders

import (
	"time"

	"github.com/offloadgo/offload/bench/internal/cpuclock"
)

// meter adds up, over a benchmark's ops, the two caller-side times the
// package doc defines: the calling goroutine's busy time, and its
// process's CPU time. Not safe for concurrent use: one caller at a time.
type meter struct {
	busy, cpu time.Duration
	ops       int
	failed    error // the first clock error, reported once at the end

	// The op in progress.
	running  bool
	since    time.Time
	cpuStart time.Duration
}

// start marks the beginning of an op: the caller is busy from here.
func (m *meter) start() {
	m.cpuStart = m.processCPU()
	m.since, m.running = time.Now(), true
}

// park marks the caller as parked (waiting on a Future) from here.
func (m *meter) park() {
	if m.running {
		m.busy += time.Since(m.since)
		m.running = false
	}
}

// resume marks the caller as busy again.
func (m *meter) resume() { m.since, m.running = time.Now(), true }

// end closes the op.
func (m *meter) end() {
	m.park()
	m.cpu += m.processCPU() - m.cpuStart
	m.ops++
}

// perOp returns the busy and CPU time of an average op.
func (m *meter) perOp() (busy, cpu time.Duration) {
	if m.ops == 0 {
		return 0, 0
	}
	return m.busy / time.Duration(m.ops), m.cpu / time.Duration(m.ops)
}

// processCPU is the CPU time all of this process's threads have used.
func (m *meter) processCPU() time.Duration {
	d, err := cpuclock.Process()
	if err != nil {
		if m.failed == nil {
			m.failed = err
		}
		return 0
	}
	return d
}
