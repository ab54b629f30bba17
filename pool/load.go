package pool

import (
	"sync/atomic"
	"time"
)

// Load is a lock-free reading of how busy a pool is right now, for
// admission decisions such as Shed's that must not contend with the pool's
// hot path. The fields are read one by one, so under concurrent change
// they may not add up exactly.
//
// MaxWorkers is Options.Workers as SetWorkers last set it, and Capacity
// that many workers plus MaxQueue. A Remote pool's Workers, MaxWorkers and
// Capacity are what its live nodes offer: their slots, capped by
// Options.Workers, and the capacity that many workers get from MaxQueue;
// all are 0 while no node is live, and admission rejects at once then
// (ErrQueueFull), so Shed answers 503.
type Load struct {
	Workers    int  // live workers (a Remote pool's: see above)
	MaxWorkers int  // the most tasks that may run at once now (see above)
	Busy       int  // workers running a task
	Queued     int  // tasks waiting for a worker
	InFlight   int  // accepted tasks not yet finished: queued plus running
	Capacity   int  // MaxWorkers + MaxQueue; -1 when the queue is Unbounded
	Closed     bool // Shutdown or Close has been called
	// RecentRunTime is an exponentially weighted average of recent tasks'
	// run time; before the first task ends, how long the first task has
	// been running (0 before one starts).
	RecentRunTime time.Duration
}

// Load returns the pool's current load without taking its lock: a few
// atomic loads. Safe for concurrent use, and after Close. A Pool not made
// by New reads as closed.
func (p *Pool) Load() Load {
	if p.usable() != nil {
		return Load{Closed: true}
	}
	r := &p.stats
	limit := p.workerLimit()
	workers := limit
	if p.slots == nil {
		workers = int(r.workers.Load())
	}
	return Load{
		Workers:       workers,
		MaxWorkers:    limit,
		Busy:          r.gauges.busy(),
		Queued:        int(r.queued.Load()),
		InFlight:      r.gauges.inflight(),
		Capacity:      p.capacity(),
		Closed:        r.closed.Load(),
		RecentRunTime: r.runTimeGuess(&p.clock),
	}
}

// setInflight and setState keep the lock-free mirrors that Load reads in
// step with the fields they mirror. p.mu is held.
func (p *Pool) setInflight(n int) {
	p.inflight = n
	p.publishGauges()
}

// publishGauges makes p.inflight and p.busy visible to the lock-free
// readers (Load, admission's first look) in one atomic store. A task
// changes both as it is admitted and handed to a worker, and as it ends
// and its worker takes the next: the hot paths change the plain fields
// and publish once, where separate mirrors cost a locked instruction
// each. p.mu is held.
func (p *Pool) publishGauges() { p.stats.gauges.store(p.inflight, p.busy) }

// gauges packs two counts of at most 2³²−1 into one word: each task in
// flight holds a call of some two hundred bytes, so 2³² of them would
// take most of a terabyte.
type gauges struct{ v atomic.Uint64 }

func (g *gauges) store(inflight, busy int) {
	g.v.Store(uint64(uint32(inflight)) | uint64(uint32(busy))<<32)
}

func (g *gauges) inflight() int { return int(uint32(g.v.Load())) }
func (g *gauges) busy() int     { return int(g.v.Load() >> 32) }

func (p *Pool) setState(s state) {
	p.state = s
	p.stats.closed.Store(s != open)
}
