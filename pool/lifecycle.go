package pool

import "context"

// Shutdown stops intake (every later submission gets ErrClosed), lets
// queued and running tasks finish, and returns once they have and every
// worker has exited. If ctx ends first, Shutdown closes the pool as Close
// does and returns ctx's error. It is safe to call more than once and
// concurrently with Close.
func (p *Pool) Shutdown(ctx context.Context) error {
	if err := p.usable(); err != nil {
		return err
	}
	if ctx == nil {
		return errNilContext
	}
	p.mu.Lock()
	if p.state == open {
		p.setState(draining)
		p.waiters.failAll(ErrClosed)
		p.wakeIdle() // idle workers see the empty queue and exit
		p.checkDrained()
	}
	p.mu.Unlock()
	select {
	case <-p.drained:
		p.cancelStop(ErrClosed) // ends the reaper
		p.workersWG.Wait()
		return nil
	case <-ctx.Done():
		p.Close()
		return ctx.Err()
	}
}

// Close stops the pool now: intake stops (ErrClosed), queued tasks are
// dropped and their callers get ErrClosed, running tasks have their ctx
// cancelled (cause ErrClosed) and their callers get ErrClosed at once
// (matching ErrTerminated too, for a Subprocess or Remote task). A
// goroutine task that ignores its ctx goes on until it returns; a
// Subprocess worker is killed once its task has not returned within
// TerminateGrace; a Remote task's node is told to cancel it. Close does
// not wait; it is idempotent and returns nil, unless p is nil or was not
// made by New.
func (p *Pool) Close() error {
	if err := p.usable(); err != nil {
		return err
	}
	p.mu.Lock()
	if p.state == closed {
		p.mu.Unlock()
		return nil
	}
	p.setState(closed)
	dropped := p.queue.drain()
	p.stats.queued.Store(0)
	p.setInflight(p.inflight - len(dropped))
	p.waiters.failAll(ErrClosed)
	var running []job
	for w := range p.all {
		if w.current != nil {
			running = append(running, w.current)
		}
	}
	p.wakeIdle()
	for _, j := range dropped {
		j.leave(ErrClosed, &p.stats.canceled)
	}
	for _, j := range running {
		j.quit(ErrClosed, &p.stats.canceled) // ErrTerminated too for one sent to a process
	}
	p.checkDrained()
	p.mu.Unlock()
	p.cancelStop(ErrClosed)
	for _, j := range dropped {
		j.freedSlot()
		j.drop() // the queue's hold; running jobs' belong to their workers
	}
	return nil
}

// wakeIdle wakes every parked worker so that it re-reads the pool's state.
// p.mu is held.
func (p *Pool) wakeIdle() {
	for _, w := range p.idle {
		w.wake <- struct{}{}
	}
	p.idle = p.idle[:0]
}
