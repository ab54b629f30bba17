package pool

import (
	"sync/atomic"
	"time"

	"github.com/offloadgo/offload/internal/seam"
)

// worker is one goroutine serving the queue. Its fields are guarded by the
// Pool's mutex unless said otherwise.
type worker struct {
	wake     chan struct{} // buffered 1: a send means "look at the queue"
	handoff  job           // set with a wake: run this, it was never queued
	current  job           // the job it runs, nil while idle
	dismiss  bool          // told by the reaper or SetWorkers to exit
	renew    bool          // told by RecycleWorkers to take its runner's new process
	idleTick uint64        // the reaper's tick when it last parked
	born     int64
	// startedAt is when current started; the worker sets it after a
	// handoff without the lock, Stats reads it under the lock. It is 0
	// while the worker is parked, and so from a handoff until then.
	startedAt atomic.Int64
	// slowAt is the startedAt of the task last reported slow, so that a
	// task is reported once (see slowtask.go).
	slowAt int64
	tally  tally       // written by the worker alone
	id     int         // for logs: the pool's count of workers started
	runner seam.Runner // a Subprocess worker's process; nil in process
	call   seam.Call   // the runner's calls, reused: one allocation less per call
	// sentAt is when the runner last said the running task started where
	// it runs (see seam.Call.Start), or 0. The worker alone uses it.
	sentAt int64
	clock  *monoclock // the pool's, for Started
	// maxWait is what QueueDelay leaves the task it took to wait for room
	// where it runs (a Remote runner waits for a node's free slot), or 0
	// for no limit. The worker alone uses it.
	maxWait time.Duration
	// shed holds the jobs QueueDelay failed as the worker looked for one
	// to run, for it to let go of once it has released the lock: ending a
	// job's span is a Tracer's code, which never runs under the lock.
	shed []job
}

// spawn starts a worker. p.mu is held.
func (p *Pool) spawn() {
	p.starting++
	p.stats.workers.Store(int64(len(p.all) + p.starting))
	p.workersWG.Add(1)
	p.spawned++
	go p.work(&worker{wake: make(chan struct{}, 1), id: p.spawned, clock: &p.clock})
	p.startReaper()
}

// startReaper starts the idle reaper if workers above MinWorkers may need
// it. p.mu is held.
func (p *Pool) startReaper() {
	if !p.reaping && p.staying() > p.opts.MinWorkers {
		p.reaping = true
		p.workersWG.Add(1)
		go p.reap()
	}
}

// staying is how many workers the pool keeps: alive or starting, less
// those dismissed. p.mu is held.
func (p *Pool) staying() int { return len(p.all) + p.starting - p.exiting }

// dismiss makes idle w exit. p.mu is held; w is no longer in p.idle.
func (p *Pool) dismiss(w *worker) {
	w.dismiss = true
	p.exiting++
	w.wake <- struct{}{} // buffered, and w was idle: never blocks
}

// work is a worker's life: take the oldest job, run it, repeat; park when
// the queue is empty; exit when dismissed, closed, or drained. A finished
// job's slot is freed before its caller is woken, so that a caller who
// submits again at once never finds its own old task still counted.
func (p *Pool) work(w *worker) {
	var done finished
	running := false // a task runs on this goroutine: see the defer
	defer func() {
		if running {
			// The task called runtime.Goexit: nothing can stop this
			// goroutine's end, so end its job and replace it.
			p.goexited(w, done)
		}
		p.workersWG.Done()
	}()
	w.born = p.clock.now()
	if p.transport != nil {
		w.runner = p.transport.NewRunner(w.id)
		w.call.Start = w
		w.runner.Warm()
	}
	p.mu.Lock()
	p.starting--
	p.all[w] = struct{}{}
	for {
		var start int64 // 0 for a fresh clock reading
		if done.job != nil {
			p.finishJob(w, done)
			start = done.end // the next task starts as this one ends
		}
		j, wait := p.nextJob(w, start, done)
		if j == nil {
			return
		}
		done = finished{job: j, wait: wait, start: w.startedAt.Load()}
		if p.stats.recentRun.Load() == 0 {
			p.stats.coldSince.CompareAndSwap(0, done.start) // see runTimeGuess
		}
		running = true
		w.sentAt = 0
		w.call.MaxWait, w.call.Queued = w.maxWait, time.Duration(wait)
		done.outcome = j.run(w.runner, &w.call)
		running = false
		done.end = p.clock.now()
		if s := w.sentAt; s != 0 && s > done.start { // 0: not sent, or no runner
			// A Remote runner waited for a node's slot: that was waiting.
			done.wait, done.start = done.wait+s-done.start, s
		}
		p.lockWorker()
	}
}

// nextJob gives w its next job and how long it waited: the oldest queued
// one (start as in take), or one handed to w while it parks. nil means w
// has left the pool: it was dismissed, or the pool closed or drained.
// done, the job w last ran, is announced once p.mu is released. p.mu is
// held on entry and released on return.
func (p *Pool) nextJob(w *worker, start int64, done finished) (job, int64) {
	parked := false // w parked once already: woken to renew, it keeps its idle time
	for {
		// A dismissed worker, or one above Workers since SetWorkers
		// lowered it, exits rather than take another task.
		leaving := w.dismiss || p.staying() > p.opts.Workers
		var j job
		var wait int64
		if !leaving {
			j, wait = p.take(w, start)
		}
		p.publishGauges() // finishJob's changes and take's, in one store
		if j != nil {
			p.mu.Unlock()
			w.letGoShed()
			p.announce(done)
			return j, wait
		}
		if leaving || p.state == closed || (p.state == draining && p.queue.n == 0) {
			p.removeWorker(w)
			p.mu.Unlock()
			w.letGoShed()
			p.announce(done)
			if w.runner != nil {
				w.runner.Close()
			}
			return nil, 0
		}
		if w.renew {
			// RecycleWorkers handed w's runner a new process: it goes in
			// service now, not when the next task comes.
			w.renew = false
			p.mu.Unlock()
			w.letGoShed()
			p.announce(done)
			done, start = finished{}, 0
			w.runner.(seam.Renewer).Refresh()
			p.mu.Lock()
			continue
		}
		if !parked {
			w.idleTick = p.tick
			parked = true
		}
		w.startedAt.Store(0) // no task: see startedAt
		p.idle = append(p.idle, w)
		p.mu.Unlock()
		w.letGoShed()
		p.announce(done)
		done, start = finished{}, 0
		<-w.wake
		if j = w.handoff; j != nil {
			w.handoff = nil
			w.startedAt.Store(p.clock.now())
			w.maxWait = p.handoffWait()
			return j, 0
		}
		p.mu.Lock()
	}
}

// Started records that the runner sent w's task where it runs (see
// seam.Call.Start).
func (w *worker) Started() { w.sentAt = w.clock.now() }

// finishJob does the pool's part of a job w has run, before its caller is
// woken (see announce): it counts the job in w's tally, lets go of the
// job's input and ctx, and frees its worker and its slot. p.mu is held:
// the worker takes it between two tasks anyway, so the tally is plain
// fields that Stats reads under the same lock.
func (p *Pool) finishJob(w *worker, f finished) {
	j := f.job
	if f.outcome == dropped {
		p.stats.canceled.Add(1) // as QueueDelay's drops from the queue
		if p.stats.recentRun.Load() == 0 {
			p.stats.coldSince.Store(0) // it never ran: no guess from it
		}
	} else {
		w.tally.turnTo(j.name()) // before it counts the job: see taskTallies
		run := f.end - f.start
		w.tally.ran(f.wait, run, f.outcome)
		p.stats.noteRun(run)
	}
	j.forget()
	w.current = nil
	p.busy--
	p.freeSlot() // nextJob and goexited publish the gauges
}

// goexited ends the job whose task called runtime.Goexit on w's goroutine,
// which is ending: the caller gets ErrGoexit, the job's slot is freed, w
// leaves the pool and, if work waits for it, a new worker takes its place.
func (p *Pool) goexited(w *worker, f finished) {
	f.outcome = f.job.exited()
	f.end = p.clock.now()
	p.mu.Lock()
	p.finishJob(w, f)
	p.publishGauges()
	p.removeWorker(w)
	if p.state != closed && p.staying() < p.opts.Workers &&
		(p.queue.n > 0 || p.staying() < p.opts.MinWorkers) {
		p.spawn()
	}
	p.mu.Unlock()
	if w.runner != nil {
		w.runner.Close()
	}
	p.announce(f)
}

// finished is a job a worker has run and not yet announced.
type finished struct {
	job        job
	wait       int64 // in the queue
	start, end int64
	outcome    outcome
}

// announce wakes the caller of a finished job whose future its run
// claimed, and lets go of the job; a zero f is nothing to announce.
// Finished first, the job is counted in Stats by the time its caller wakes.
func (p *Pool) announce(f finished) {
	if f.job == nil {
		return
	}
	if f.outcome != lost {
		f.job.wake()
	}
	f.job.freedSlot()
	f.job.drop()
}

// take gives w the oldest queued job, ready to run, and how long it
// waited; or nil. start is the time now, or 0 to read the clock. p.mu is
// held.
func (p *Pool) take(w *worker, start int64) (job, int64) {
	if p.state == closed {
		return nil, 0
	}
	qd := p.opts.QueueDelay
	if start == 0 && (qd.enabled() || p.queue.n > 0) {
		start = p.clock.now()
	}
	for {
		l := p.queue.pop()
		if l == nil {
			p.lastEmpty = start
			return nil, 0
		}
		p.stats.queued.Store(int64(p.queue.n))
		if qd.enabled() {
			limit, late := p.overdue(l.since, start)
			if late {
				p.shedOverdue(w, l.job, time.Duration(start-l.since), limit)
				continue
			}
			w.maxWait = remaining(limit, start-l.since)
			if p.queue.n == 0 {
				p.lastEmpty = start
			}
		}
		w.startedAt.Store(start)
		p.assign(w, l.job)
		return l.job, start - l.since
	}
}

// shedOverdue fails a task QueueDelay won't run and frees its slot; w
// lets go of it once p.mu is released (letGoShed). p.mu is held.
func (p *Pool) shedOverdue(w *worker, j job, waited, limit time.Duration) {
	j.leave(errOverdue(waited, limit), &p.stats.canceled)
	p.release()
	w.shed = append(w.shed, j)
}

// letGoShed lets go of the jobs shedOverdue failed, outside p.mu.
func (w *worker) letGoShed() {
	for i, j := range w.shed {
		j.freedSlot()
		j.drop() // the queue's hold
		w.shed[i] = nil
	}
	w.shed = w.shed[:0]
}

// assign makes j the job w runs. p.mu is held.
func (p *Pool) assign(w *worker, j job) {
	p.busy++ // published by assign's caller
	w.current = j
	if p.opts.SlowTaskAfter > 0 && !p.watchingSlow { // inline: a task's path pays one test
		p.watchSlow()
	}
}

// removeWorker removes w from the pool as it exits. p.mu is held.
func (p *Pool) removeWorker(w *worker) {
	delete(p.all, w)
	if w.dismiss {
		p.exiting--
	}
	p.stats.workers.Store(int64(len(p.all) + p.starting))
	p.stats.exited.merge(&w.tally)
	p.stats.exited.tasks.merge(&w.tally)
	p.stats.exitedNanos += p.clock.now() - w.born
	p.checkDrained()
}

// reapTicks is how many reaper ticks (each IdleTimeout/4) a worker must
// stay parked before it is dismissed: it exits between 1 and 1.25 times
// IdleTimeout after its last task.
const reapTicks = 5

// reap dismisses workers above MinWorkers that have been idle for
// IdleTimeout. One reaper runs while the pool has such workers, so that
// parking a worker costs no timer on the hot path.
func (p *Pool) reap() {
	defer p.workersWG.Done()
	t := time.NewTicker(p.opts.IdleTimeout / (reapTicks - 1))
	defer t.Stop()
	for {
		select {
		case <-t.C:
		case <-p.stop.Done():
		}
		p.mu.Lock()
		p.tick++
		surplus := p.staying() - p.opts.MinWorkers
		kept := p.idle[:0]
		for _, w := range p.idle { // oldest-parked first
			if surplus > 0 && p.tick-w.idleTick >= reapTicks {
				p.dismiss(w)
				surplus--
				continue
			}
			kept = append(kept, w)
		}
		p.idle = kept
		if surplus <= 0 || p.state != open {
			p.reaping = false
			p.mu.Unlock()
			return
		}
		p.mu.Unlock()
	}
}
