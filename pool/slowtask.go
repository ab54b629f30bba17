package pool

import (
	"time"

	"github.com/offloadgo/offload/internal/seam"
)

// A task running past Options.SlowTaskAfter is reported once, by one
// watcher goroutine per pool rather than a timer per task: it runs while
// tasks run (assign starts it), sleeps until the oldest unreported task
// comes due, reports what has, and exits once no task runs, or the pool
// has closed. Its sleeps are at least a quarter of the threshold, so that
// a stream of tasks that each end just short of it wakes the watcher at
// most four times a threshold; a report is that much late at worst.

// watchSlow starts the slow-task watcher if the pool wants one and it is
// not running. p.mu is held; assign calls it as a task starts.
func (p *Pool) watchSlow() {
	if p.opts.SlowTaskAfter <= 0 || p.watchingSlow || p.state == closed {
		return
	}
	p.watchingSlow = true
	p.workersWG.Add(1)
	go p.watchSlowTasks()
}

// watchSlowTasks is the watcher's life (see above).
func (p *Pool) watchSlowTasks() {
	defer p.workersWG.Done()
	after := p.opts.SlowTaskAfter // never changes after New
	timer := time.NewTimer(after)
	defer timer.Stop()
	var slow []WorkerEvent
	for {
		select {
		case <-timer.C:
		case <-p.stop.Done():
			p.mu.Lock()
			p.watchingSlow = false
			p.mu.Unlock()
			return
		}
		t := p.clock.now()
		p.mu.Lock()
		next, running := p.findSlow(t, int64(after), &slow)
		p.watchingSlow = running
		p.mu.Unlock()
		for i, ev := range slow {
			p.events.emit(ev) // the user's logger and hook: never under p.mu
			slow[i] = WorkerEvent{}
		}
		slow = slow[:0]
		if !running {
			return
		}
		timer.Reset(max(time.Duration(next-t), after/4))
	}
}

// findSlow adds to slow an event for each running task that has run
// after ns or more at t and was not reported yet, counts them in
// Stats.Slow, and returns when the next unreported task comes due and
// whether any task runs. p.mu is held.
func (p *Pool) findSlow(t, after int64, slow *[]WorkerEvent) (next int64, running bool) {
	next = t + after // a task that starts from now on
	for w := range p.all {
		if w.current == nil {
			continue
		}
		running = true
		start := w.startedAt.Load()
		if start == 0 || start == w.slowAt {
			continue // just handed over, not started yet; or reported
		}
		if due := start + after; due > t {
			next = min(next, due)
			continue
		}
		w.slowAt = start
		p.stats.slow.Add(1)
		ev := WorkerEvent{Kind: WorkerSlowTask, Worker: w.id, Task: w.current.name(), Running: time.Duration(t - start)}
		if l, ok := w.runner.(seam.Locator); ok {
			ev.PID, ev.Node = l.Where()
		}
		*slow = append(*slow, ev)
	}
	return next, running
}
