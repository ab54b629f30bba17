package pool

import "fmt"

// A pool's workers and capacity are its settings, except where its
// transport counts live slots (a Remote pool's nodes come and go): then
// they are what the live workers offer, capped by the settings. Admission,
// Load and Shed all read them here, so that a pool with no live node
// rejects at once (ErrQueueFull, hence a 503) rather than holding every
// call until its ctx ends.

// errNoWorkerNode is admission's error when the transport has no live
// worker at all.
var errNoWorkerNode = fmt.Errorf("%w: no worker node is available", ErrQueueFull)

// workerLimit is how many tasks may run at once now.
func (p *Pool) workerLimit() int {
	if p.slots == nil {
		return p.opts.Workers
	}
	n := p.slots.Slots()
	if n < 0 {
		return p.opts.Workers // not known yet: the settings
	}
	return min(n, p.opts.Workers)
}

// capacity is how many tasks the pool may hold now, running and queued;
// -1 for no limit.
func (p *Pool) capacity() int {
	if p.slots == nil {
		return p.opts.capacity
	}
	return p.opts.capacityFor(p.workerLimit())
}

// capacityFor is the capacity of a pool running workers tasks at once,
// with the queue its settings give it: auto (workers²), fixed, none or
// unbounded. No workers, no capacity: nothing could run.
func (s settings) capacityFor(workers int) int {
	switch {
	case workers == s.Workers:
		return s.capacity
	case workers <= 0:
		return 0
	case s.autoQueue:
		return saturatingAdd(workers, saturatingMul(workers, workers))
	case s.capacity < 0:
		return -1
	}
	return saturatingAdd(workers, s.MaxQueue)
}

// fullErr is the error of a submission that finds no room.
func (p *Pool) fullErr() error {
	if p.slots != nil && p.workerLimit() == 0 {
		return errNoWorkerNode
	}
	return ErrQueueFull
}
