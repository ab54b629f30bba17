package pool

// waiter is a SubmitBlocking caller waiting for an admission slot.
type waiter struct {
	ready   chan struct{} // closed when granted a slot or failed
	granted bool
	err     error // set instead of granted when the pool closes
}

// waitList holds waiters in arrival order. The Pool's mutex guards it.
// Waiting is the uncommon path, so a slice is enough.
type waitList struct{ w []*waiter }

// grant hands a freed slot to the oldest waiter and reports whether there
// was one.
func (l *waitList) grant() bool {
	if len(l.w) == 0 {
		return false
	}
	w := l.w[0]
	l.w = l.w[1:]
	w.granted = true
	close(w.ready)
	return true
}

// failAll wakes every waiter with err.
func (l *waitList) failAll(err error) {
	for _, w := range l.w {
		w.err = err
		close(w.ready)
	}
	l.w = nil
}

func (l *waitList) remove(w *waiter) {
	for i, x := range l.w {
		if x == w {
			l.w = append(l.w[:i], l.w[i+1:]...)
			return
		}
	}
}

// waitForRoom blocks, with p.mu held on entry, until a slot is granted to
// the caller (returning nil with p.mu held again and the slot counted in
// p.inflight) or the caller's ctx ends or the pool closes (returning the
// error with p.mu released). It reads the caller's ctx through end alone,
// so that nothing of the caller's can panic or block while it is in the
// list, where a slot granted to nobody would be lost.
func (p *Pool) waitForRoom(end *callerEnd) error {
	w := &waiter{ready: make(chan struct{})}
	p.waiters.w = append(p.waiters.w, w)
	p.mu.Unlock()
	select {
	case <-w.ready:
	case <-end.done:
	}
	var ended error
	if end.ended() {
		ended = end.err()
	}
	p.mu.Lock()
	switch {
	case w.err != nil:
		p.mu.Unlock()
		return w.err
	case w.granted && ended == nil && p.state == open:
		return nil
	case w.granted:
		p.release() // give the slot we can't use to the next in line
	default:
		p.waiters.remove(w)
	}
	err := ended
	if p.state != open {
		err = ErrClosed
	}
	p.mu.Unlock()
	return err
}

// grantRoom hands the room the pool has now to its SubmitBlocking
// callers, the longest-waiting first, one new slot each, until it is full
// again: after SetWorkers raised its capacity, or as a Remote pool's nodes
// offer more slots (a node joined). Freed slots go to waiters through
// release; this is for room that no release announces.
func (p *Pool) grantRoom() {
	p.mu.Lock()
	p.grantRoomLocked()
	p.mu.Unlock()
}

// grantRoomLocked is grantRoom with p.mu held.
func (p *Pool) grantRoomLocked() {
	for p.state == open && !p.full() && p.waiters.grant() {
		p.setInflight(p.inflight + 1) // a new slot, now the waiter's
	}
}
