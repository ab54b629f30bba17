package pool

import "fmt"

// A pool's workers and capacity are its settings (Workers, as SetWorkers
// last set it, and Workers + MaxQueue), except where its transport counts
// live slots (a Remote pool's nodes come and go): then they are what the
// live workers offer, capped by the settings. Admission, Load and Shed all
// read them here, without the pool's lock, through the mirrors below; so
// a pool with no live node rejects at once (ErrQueueFull, hence a 503)
// rather than holding every call until its ctx ends, and a new Workers
// takes effect for the next submission.

// errNoWorkerNode is admission's error when the transport has no live
// worker at all.
var errNoWorkerNode = fmt.Errorf("%w: no worker node is available", ErrQueueFull)

// setLimits keeps the lock-free mirrors of opts.Workers and opts.capacity
// in step with them. p.mu is held (or p is not yet shared).
func (p *Pool) setLimits() {
	p.maxWorkers.Store(int64(p.opts.Workers))
	p.maxInflight.Store(int64(p.opts.capacity))
}

// workerLimit is how many tasks may run at once now.
func (p *Pool) workerLimit() int {
	limit := int(p.maxWorkers.Load())
	if p.slots == nil {
		return limit
	}
	n := p.slots.Slots()
	if n < 0 {
		return limit // not known yet: the settings
	}
	return min(n, limit)
}

// capacity is how many tasks the pool may hold now, running and queued;
// -1 for no limit.
func (p *Pool) capacity() int {
	if p.slots == nil {
		return int(p.maxInflight.Load())
	}
	return p.opts.queue.capacityFor(p.workerLimit())
}

// fullErr is the error of a submission that finds no room.
func (p *Pool) fullErr() error {
	if p.slots != nil && p.workerLimit() == 0 {
		return errNoWorkerNode
	}
	return ErrQueueFull
}
