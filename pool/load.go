package pool

import "time"

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
	// run time (0 before the first task ends).
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
		Busy:          int(r.busy.Load()),
		Queued:        int(r.queued.Load()),
		InFlight:      int(r.inflight.Load()),
		Capacity:      p.capacity(),
		Closed:        r.closed.Load(),
		RecentRunTime: time.Duration(r.recentRun.Load()),
	}
}

// setInflight and setState keep the lock-free mirrors that Load reads in
// step with the fields they mirror. p.mu is held.
func (p *Pool) setInflight(n int) {
	p.inflight = n
	p.stats.inflight.Store(int64(n))
}

func (p *Pool) setState(s state) {
	p.state = s
	p.stats.closed.Store(s != open)
}
