package pool

import (
	"sync"
	"time"
)

// Durations is a histogram of durations kept as a pool keeps its
// WaitTime and RunTime (eight buckets per power of two), for a package
// that reports durations of its own as a Summary: natsjobs keeps its
// jobs' run times in one, which poolprom and poolotel report as they do
// a pool's. Its zero value is empty and ready. Safe for concurrent use:
// Record takes a mutex, held for a few plain stores.
type Durations struct {
	mu sync.Mutex
	h  histogram
}

// Record adds d (a negative d counts as 0).
func (d *Durations) Record(t time.Duration) {
	d.mu.Lock()
	d.h.record(int64(t))
	d.mu.Unlock()
}

// Summary describes the durations recorded so far.
func (d *Durations) Summary() Summary {
	d.mu.Lock()
	h := d.h // a copy (4 KiB), summarised outside the lock
	d.mu.Unlock()
	return h.summary()
}
