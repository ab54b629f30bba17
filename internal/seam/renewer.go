package seam

import "context"

// Renewer is a Runner whose worker process can be replaced while its
// worker goroutine serves: the new process is started and has said hello
// before the old one leaves, which it does between two calls, so that no
// call is interrupted and the worker's capacity never drops.
type Renewer interface {
	// Renew starts a process to replace the runner's current one and,
	// once it has said hello, hands it to the worker goroutine, which
	// takes it at its next call or Refresh and retires the old one then
	// (a Recycled event); done is closed once it has, or once the runner
	// has closed. Renew blocks for the start only, bounded by ctx and by
	// the pool's end; an error (one matching ErrWorkerStartFailed for a
	// process that did not come up, or ctx's cause) leaves the runner as
	// it was. Renew never calls ctx's methods on another goroutine than
	// its caller's. It is safe for concurrent use with the worker
	// goroutine's calls, not with another Renew of the same runner.
	Renew(ctx context.Context) (done <-chan struct{}, err error)
	// Refresh takes the process Renew handed over, if there is one. Only
	// the worker goroutine calls it, between calls.
	Refresh()
}
