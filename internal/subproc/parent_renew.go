package subproc

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/offloadgo/offload/internal/seam"
	"github.com/offloadgo/offload/internal/workerproc"
)

// Renew starts a process to replace the runner's current one (see
// seam.Renewer). The start runs on a goroutine of its own, bounded by the
// pool's end, so that ctx's methods run on the caller's goroutine only:
// when ctx ends first, the start is cut short and its process closed.
func (r *runner) Renew(ctx context.Context) (<-chan struct{}, error) {
	if r.renewal.isClosed() {
		return closedDone, nil // the worker left: nothing of it to replace
	}
	start, cancel := context.WithCancel(r.stop)
	defer cancel()
	type started struct {
		p   *workerproc.Process
		err error
	}
	ch := make(chan started, 1)
	go func() {
		p, err := r.start(start, seam.Recycled)
		ch <- started{p, err}
	}()
	var res started
	select {
	case res = <-ch:
	case <-ctx.Done():
		cancel()
		if res = <-ch; res.p != nil {
			res.p.Close() // up just as ctx ended: it served nothing
		}
		return nil, context.Cause(ctx)
	}
	if res.err != nil {
		if r.stop.Err() != nil {
			return nil, seam.ErrClosed
		}
		return nil, r.sp.startFailed(res.err) // the old process serves on: no backoff
	}
	r.sp.starts.reset() // the program starts: a backoff after failed starts ends
	done, ok := r.renewal.offer(res.p)
	if !ok {
		res.p.Close() // the worker left meanwhile
		return closedDone, nil
	}
	return done, nil
}

// Refresh puts the process Renew handed over in service, if there is one,
// and retires the process it replaces (Recycled), or drops the start in
// progress that would have replaced a dead one. The worker goroutine
// calls it between calls, so no call is cut short.
func (r *runner) Refresh() {
	if !r.renewal.ready.Load() {
		return
	}
	p, done := r.renewal.take()
	if p == nil {
		return
	}
	if r.pending != nil {
		r.dropPending()
	}
	if r.cur != nil {
		r.withdraw(r.cur, seam.Recycled)
	}
	r.cur = r.watch(p)
	close(done)
}

// dropPending ends, in the background, the process a start in progress
// brings up: the process Refresh puts in service takes its place.
func (r *runner) dropPending() {
	ch := r.pending
	r.pending = nil
	r.bg.Add(1)
	go func() {
		defer r.bg.Done()
		if res := <-ch; res.l != nil {
			r.note(seam.Recycled, res.l)
			res.l.end()
		}
	}()
}

// closedDone is the done of a Renew with nothing to wait for.
var closedDone = func() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}()

// renewal is where Renew leaves a started process for the worker
// goroutine. Safe for concurrent use.
type renewal struct {
	ready atomic.Bool // next is set: Refresh's look without the lock

	mu     sync.Mutex
	next   *workerproc.Process
	done   chan struct{} // closed when next is taken or the runner closes
	closed bool          // the runner closed: it takes no more
}

// offer leaves p for the worker goroutine and returns the channel closed
// once it takes it; false if the runner has closed. A process offered
// before and not yet taken is closed: p, the newer, replaces it, and the
// done of both is the same.
func (b *renewal) offer(p *workerproc.Process) (<-chan struct{}, bool) {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil, false
	}
	old := b.next
	b.next = p
	if b.done == nil {
		b.done = make(chan struct{})
	}
	done := b.done
	b.ready.Store(true)
	b.mu.Unlock()
	if old != nil {
		old.Close()
	}
	return done, true
}

// take returns the process offered and its done, or nils.
func (b *renewal) take() (*workerproc.Process, chan struct{}) {
	b.mu.Lock()
	defer b.mu.Unlock()
	p, done := b.next, b.done
	b.next, b.done = nil, nil
	b.ready.Store(false)
	return p, done
}

// close refuses later offers and ends the process offered, if any: the
// runner is closing.
func (b *renewal) close() {
	b.mu.Lock()
	b.closed = true
	b.mu.Unlock()
	if p, done := b.take(); p != nil {
		p.Close()
		close(done)
	}
}

func (b *renewal) isClosed() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.closed
}
