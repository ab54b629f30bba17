package pool

import "sync/atomic"

// Future is the pending result of a task accepted by Submit. It resolves
// exactly once: with the task's result, its error, or the reason it never
// finished (the Submit ctx's error, ErrClosed). Its methods are safe for
// concurrent use.
type Future[Out any] struct {
	resolved atomic.Bool
	// waiter is the channel that Done hands out, made by the first caller
	// who has to wait, and closed on resolution; resolvedMark once
	// resolved. A future resolved before anyone waits never makes one.
	waiter atomic.Pointer[chan struct{}]
	// signal is set instead for Run's recycled calls: a buffered channel
	// that gets one send, received by Run itself.
	signal chan struct{}
	out    Out
	err    error
}

// closedChan is what Done returns for a resolved future.
var (
	closedChan   = func() chan struct{} { c := make(chan struct{}); close(c); return c }()
	resolvedMark = &closedChan
)

// Wait blocks until the future resolves and returns the task's result. It
// returns at once with the ctx error when the ctx given to Submit ends
// first, even if the task (which got that ctx) goes on running. Calling Wait
// again returns the same values. On a nil Future it returns an error at
// once.
func (f *Future[Out]) Wait() (Out, error) {
	if f == nil {
		var zero Out
		return zero, errNilFuture
	}
	<-f.Done()
	return f.out, f.err
}

// Done returns a channel closed when the future has resolved, for use in a
// select; Wait then returns without blocking. A nil Future is resolved
// already, with an error.
func (f *Future[Out]) Done() <-chan struct{} {
	if f == nil {
		return closedChan
	}
	p := f.waiter.Load()
	if p == nil {
		c := make(chan struct{})
		if f.waiter.CompareAndSwap(nil, &c) {
			return c
		}
		p = f.waiter.Load() // resolved, or another waiter's channel
	}
	return *p
}

// claim reserves the right to complete the future; only one caller gets it.
// Between claim and complete the winner may do its bookkeeping, so that it is
// done before the future's owner wakes.
func (f *Future[Out]) claim() bool { return f.resolved.CompareAndSwap(false, true) }

// complete stores the result and wakes whoever waits. Call it once, after a
// successful claim.
func (f *Future[Out]) complete(out Out, err error) {
	f.out, f.err = out, err
	f.wake()
}

// wake wakes whoever waits for a future whose result is stored. Call it
// once, after a successful claim.
func (f *Future[Out]) wake() {
	if f.signal != nil {
		f.signal <- struct{}{}
	} else if p := f.waiter.Swap(resolvedMark); p != nil {
		close(*p)
	}
}
