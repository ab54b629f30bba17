package pool

import "sync/atomic"

// Future is the pending result of a task accepted by Submit. It resolves
// exactly once: with the task's result, its error, or the reason it never
// finished (the Submit ctx's error, ErrClosed). Its methods are safe for
// concurrent use.
type Future[Out any] struct {
	done     chan struct{}
	resolved atomic.Bool
	// signal: done is buffered and gets one send instead of a close, so
	// that Run can reuse it; only Run's own caller ever receives from it.
	signal bool
	out    Out
	err    error
}

// Wait blocks until the future resolves and returns the task's result. It
// returns at once with the ctx error when the ctx given to Submit ends
// first, even if the task (which got that ctx) goes on running. Calling Wait
// again returns the same values.
func (f *Future[Out]) Wait() (Out, error) {
	<-f.done
	return f.out, f.err
}

// Done returns a channel closed when the future has resolved, for use in a
// select; Wait then returns without blocking.
func (f *Future[Out]) Done() <-chan struct{} { return f.done }

// resolve settles the future and reports whether this call did: the first
// result wins, later ones are dropped.
func (f *Future[Out]) resolve(out Out, err error) bool {
	if !f.resolved.CompareAndSwap(false, true) {
		return false
	}
	f.out, f.err = out, err
	if f.signal {
		f.done <- struct{}{}
	} else {
		close(f.done)
	}
	return true
}
