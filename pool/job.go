package pool

import (
	"context"
	"sync/atomic"

	"github.com/offloadgo/offload/internal/seam"
)

// job is what the queue and the workers see of a call, whatever its types.
// Its life: check, prepare (before the lock), enter (under it) — or
// reject; then run (or exited, for a task that called runtime.Goexit); or,
// without running, leave. fail and quit resolve it early from outside;
// forget and drop let go of it.
type job interface {
	queueLink() *link
	callerEnd() *callerEnd // how the caller's ctx ends, as check read it
	name() string          // the task's
	// check refuses a submission that can't be taken, before any work: a
	// nil ctx, an unregistered task, a caller who has given up already;
	// and reads how the caller's ctx ends (see callerEnd), with what watch
	// needs if the call will be watched. The pool's own code calls the
	// caller's ctx's methods nowhere else (a Tracer is handed the ctx
	// after, on the same goroutine).
	check(watched bool) error
	// unfitFor refuses, on a pool that runs its tasks at pl, a task that
	// can't run there, or whose input or output type would not cross to
	// its workers intact.
	unfitFor(pl placement) error
	// prepare does the submission's work that calls into the caller's
	// code, before the pool's lock: it encodes the input for tr (nil for
	// InProcess), so that a value that can't cross fails at once and costs
	// no slot, and derives the task's context from what check read of
	// the caller's ctx, and stop.
	prepare(tr seam.Carrier, stop context.Context) error
	// startSpan starts the task's span with t, for a pool of isolation
	// iso, and if the task crosses to a worker process or node, encodes
	// the trace context to send with it. On error the span is started
	// (reject ends it).
	startSpan(t Tracer, iso Isolation, crosses bool) error
	// reject undoes prepare and lets go of a refused submission, ending
	// its span with err.
	reject(err error)
	// enter takes the admitted job in, under the pool's lock: its input's
	// Buffers are handed over to the call (a refused call must leave the
	// caller's Buffers alone), and with watch the future is set to resolve
	// when the caller's ctx ends — by watching its Done channel as check
	// read it, so that no caller code runs under the lock, nor after. On
	// error nothing has changed.
	enter(p *Pool, watch bool) error
	// run executes the task — on this goroutine, or through r with the
	// worker's scratch Call — and claims the future for its result.
	run(r seam.Runner, scratch *seam.Call) outcome
	// exited ends a job whose task called runtime.Goexit on the worker's
	// goroutine, as run would have had the task returned ErrGoexit.
	exited() outcome
	// wake wakes the caller of a future that run claimed and filled, once
	// the worker has done its bookkeeping, having ended the task's span.
	wake()
	// fail resolves the future with err unless it has resolved already,
	// counting it in tally, and cancels the task's context.
	fail(err error, tally *atomic.Uint64) bool
	// quit resolves the future of a running task whose caller's ctx ended
	// with end, or that the pool closed under it (end is ErrClosed): with
	// ErrTerminated too if its transport terminates it.
	quit(end error, tally *atomic.Uint64)
	// leave resolves a job that leaves the queue without running (its
	// caller gave up, the pool closed, or QueueDelay shed it) with err:
	// the input's Buffers are freed before the caller hears of it, and the
	// call lets go of its input and ctx after. p.mu is held.
	leave(err error, tally *atomic.Uint64)
	// forget drops the input and the caller's ctx (and what the pool
	// derived from it) once the job has run. p.mu is held.
	forget()
	// drop says the pool is done with the job (see call.refs).
	drop()
	// freedSlot runs what the submitter asked to hear once the job's slot
	// is free (see submitAny), outside the pool's lock, and ends the
	// task's span if wake did not.
	freedSlot()
}

// outcome is how a job that ran ended for its caller, for the counters.
type outcome uint8

const (
	lost      outcome = iota // resolved by someone else first, who counted it
	completed                // the task's result
	failed                   // the task's error, or its panic
	canceled                 // the caller's ctx ended: the caller got its error
	// dropped: its runner found no room for it within what QueueDelay
	// allowed, and sent it nowhere; it never ran, as a task QueueDelay
	// drops from the queue.
	dropped
)
