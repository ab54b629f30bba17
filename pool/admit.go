package pool

// admitMode says how a submission is admitted.
type admitMode uint8

const (
	admitNow   admitMode = 0         // fail with ErrQueueFull when at capacity
	admitWait  admitMode = 1 << iota // block for room instead
	admitWatch                       // resolve the future when ctx ends, even if nobody waits
)

// admit accepts j into the queue or says why not, without side effects on
// failure: a rejected job never runs and holds no slot, and nobody will
// use it.
func (p *Pool) admit(j job, mode admitMode) error {
	if err := p.usable(); err != nil {
		return err
	}
	err := p.tryAdmit(j, mode)
	if err != nil {
		p.stats.rejected.Add(1)
		j.reject(err)
	}
	return err
}

// tryAdmit is admit's work. Everything that calls into the caller's code —
// the ctx's methods, the input's encoder — runs before the pool's lock is
// taken: a ctx that panics then fails its own caller and leaves the pool
// as it was, and no caller can stall the lock.
func (p *Pool) tryAdmit(j job, mode admitMode) error {
	if err := p.screen(j, mode); err != nil {
		return err
	}
	// A lock-free look first: the check under the lock decides, but this
	// one keeps a flood of rejections off the lock and spares them the
	// encoding and the ctx derivation.
	if err := p.refusal(mode); err != nil {
		return err
	}
	if err := j.prepare(p.transport, p.stop); err != nil {
		return err
	}
	// A task that will wait in the queue needs the time it was queued; read
	// the clock before the lock rather than while holding it, when the
	// lock-free counters say the task will likely queue.
	var since int64
	if p.likelyQueued() {
		since = p.clock.now()
	}
	p.mu.Lock()
	waited, err := p.takeSlot(j, mode)
	if err != nil {
		return err // takeSlot has unlocked
	}
	if waited {
		since = 0 // the wait for room is not time in the queue
	}
	return p.enterAndWake(j, mode, since)
}

// screen is admission's first steps, the caller's code: it reads j's ctx
// (see check), checks that j's task can run on this pool's workers, and
// starts j's span if the pool has a Tracer.
func (p *Pool) screen(j job, mode admitMode) error {
	if err := j.check(mode&admitWatch != 0); err != nil {
		return err
	}
	if err := j.unfitFor(p.opts.placement); err != nil {
		return err
	}
	if t := p.opts.Tracer; t != nil {
		return j.startSpan(t, p.opts.Isolation, p.transport != nil)
	}
	return nil
}

// refusal is admission's lock-free look: the error a submission would get
// now, from the counters alone, or nil if it may have room.
func (p *Pool) refusal(mode admitMode) error {
	switch {
	case p.stats.closed.Load():
		return ErrClosed
	case mode&admitWait == 0:
		if c := p.capacity(); c >= 0 && p.stats.gauges.inflight() >= c {
			return p.fullErr()
		}
	case p.slots != nil && p.workerLimit() == 0:
		return errNoWorkerNode
	}
	return nil
}

// takeSlot takes an admission slot for j, waiting for one if mode says
// so, and reports whether it waited. p.mu is held, and stays held unless
// takeSlot fails.
func (p *Pool) takeSlot(j job, mode admitMode) (waited bool, err error) {
	if p.state != open {
		p.mu.Unlock()
		return false, ErrClosed
	}
	if !p.full() {
		p.inflight++ // published with the worker's busy count (see enterAndWake)
		return false, nil
	}
	if mode&admitWait == 0 || p.workerLimit() == 0 {
		// (A Remote pool with no live node fails SubmitBlocking too:
		// blocking on a node that may never come is the hang that
		// failing fast is for.)
		p.mu.Unlock()
		return false, p.fullErr()
	}
	if err := p.waitForRoom(j.callerEnd()); err != nil {
		return false, err // waitForRoom has unlocked
	}
	return true, nil
}

// enterAndWake makes j, whose slot is taken, the pool's: it is handed to
// an idle worker or queued (as queued at since, or now if since is 0),
// and the worker that will run it is woken. p.mu is held, and released
// on return; if j can't enter, its slot is freed.
func (p *Pool) enterAndWake(j job, mode admitMode, since int64) error {
	if err := j.enter(p, mode&admitWatch != 0); err != nil {
		p.release()
		p.mu.Unlock()
		return err
	}
	w := p.enqueue(j, since)
	p.publishGauges()
	p.mu.Unlock()
	if w != nil {
		// Woken after the unlock, so that it doesn't wake into a held lock.
		w.wake <- struct{}{} // buffered, and w was idle: never blocks
	}
	return nil
}

// usable says why p can't be used at all: nil, or not made by New.
func (p *Pool) usable() error {
	if p == nil || p.stop == nil {
		return errNotNew
	}
	return nil
}

// full reports whether every admission slot is taken. p.mu is held.
func (p *Pool) full() bool {
	c := p.capacity()
	return c >= 0 && p.inflight >= c
}

// likelyQueued guesses, without the lock, whether a new task would wait
// in the queue rather than go to an idle worker: tasks are queued, or
// every worker is busy. A wrong guess costs only a clock read.
func (p *Pool) likelyQueued() bool {
	st := &p.stats
	return st.queued.Load() > 0 || int64(st.gauges.busy()) >= st.workers.Load()
}

// enqueue gives an admitted job to an idle worker, or puts it in the queue
// (as queued at since, or now if since is 0) and makes sure a worker will
// take it. It returns the idle worker for the caller to wake once it has
// released p.mu. p.mu is held and the job's slot is counted in p.inflight.
func (p *Pool) enqueue(j job, since int64) *worker {
	p.stats.submitted++
	var w *worker
	if n := len(p.idle); n > 0 {
		w = p.idle[n-1]
		p.idle = p.idle[:n-1]
		if p.queue.n == 0 {
			// Nothing is ahead of j: hand it to the idle worker directly,
			// which saves that worker a trip through the lock and queue
			// (and the task any wait in it).
			w.handoff = j
			p.assign(w, j)
			return w
		}
	}
	if since == 0 {
		since = p.clock.now()
	}
	j.queueLink().since = since
	if p.queue.n == 0 {
		p.lastEmpty = since // empty until now, for QueueDelay
	}
	p.queue.push(j.queueLink())
	p.stats.queued.Store(int64(p.queue.n))
	if w != nil {
		return w
	}
	if p.staying() < p.opts.Workers {
		p.spawn()
	}
	return nil
}

// abandon resolves j with err because its caller's ctx ended. A queued job
// leaves the queue and frees its slot at once; a running one keeps its
// worker (and its slot) until the task returns.
func (p *Pool) abandon(j job, err error) {
	p.mu.Lock()
	dequeued := p.queue.remove(j.queueLink())
	if dequeued {
		p.stats.queued.Store(int64(p.queue.n))
		p.release()
		j.leave(err, &p.stats.canceled)
	} else {
		j.quit(err, &p.stats.canceled) // its worker forgets it when it returns
	}
	p.mu.Unlock()
	if dequeued {
		j.freedSlot()
		j.drop() // the queue's hold; a running job's is its worker's
	}
}

// release frees one admission slot: it goes to the longest-waiting
// SubmitBlocking caller if there is one, unless the pool holds more than
// its settings' capacity (SetWorkers lowered it: tasks queued beyond the
// new bound run, and the waiters wait for room). An unbounded capacity
// (-1) is never exceeded: a Remote pool's waiters, held while no node
// offered room, still get freed slots. p.mu is held.
func (p *Pool) release() {
	p.freeSlot()
	p.publishGauges()
}

// freeSlot is release without publishing the gauges: for a worker, which
// publishes them once it has taken its next task. p.mu is held.
func (p *Pool) freeSlot() {
	if (p.opts.capacity < 0 || p.inflight <= p.opts.capacity) && p.waiters.grant() {
		return // the slot now belongs to that waiter
	}
	p.inflight--
	p.checkDrained()
}

// checkDrained closes p.drained once a pool that no longer takes work has
// nothing left: no task in flight and no worker alive. p.mu is held.
func (p *Pool) checkDrained() {
	if p.state == open || p.inflight > 0 || len(p.all) > 0 || p.starting > 0 {
		return
	}
	select {
	case <-p.drained:
	default:
		// Whoever the close wakes (Shutdown) finds Load at rest too,
		// though the caller may not have published its last change yet.
		p.publishGauges()
		close(p.drained)
	}
}
