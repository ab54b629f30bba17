package pool

import (
	"context"
	"fmt"

	"github.com/offloadgo/offload/internal/shmbuf"
)

// SubmitAll accepts one task per input, as one admission, and returns
// their Futures in input order, without waiting for a worker. It is
// Submit for fan-out: the batch is admitted whole or not at all. If the
// pool lacks room for every task (free workers plus free queue slots), it
// fails at once with an error matching ErrQueueFull that says how many
// would have fit; then no task is admitted, none runs, the inputs are
// left as they were and Stats.Submitted does not move (each task counts
// in Rejected, as a refused Submit does).
//
// Each task is what Submit would make of its input: the tasks get ctx
// (each its own context derived from it), are queued in input order (so
// a FIFO pool starts them in that order), are traced and labelled like
// Submit's, and resolve exactly once. When ctx ends, every Future not
// yet resolved resolves with ctx's error, and the tasks still queued
// leave the queue at once. Inputs that hold a *transfer.Buffer move as
// one value: a Buffer appears in at most one input of a batch.
//
// It fails with ErrClosed after Shutdown or Close, ErrUnknownTask for a
// Task not made by Register, and at once with ctx's error if ctx has
// ended; an input that can't be encoded for a worker process fails the
// whole batch with that input's error. An empty batch gets the same
// checks, but never ErrQueueFull, and returns nil, nil: there is nothing
// to wait for. Safe for concurrent use; it never blocks on the pool.
//
// The batch's tasks share one allocation: a Future kept after the others
// are dropped keeps their results alive too.
func SubmitAll[In, Out any](ctx context.Context, p *Pool, task Task[In, Out], ins []In) ([]*Future[Out], error) {
	if err := p.usable(); err != nil {
		return nil, err
	}
	err := submissionErr(ctx, task.def != nil)
	if len(ins) == 0 || err != nil {
		if err == nil && p.stats.closed.Load() {
			err = ErrClosed // an empty batch is refused as any other would be
		}
		p.stats.rejected.Add(uint64(len(ins)))
		return nil, err
	}
	calls := make([]call[In, Out], len(ins))
	for i := range calls {
		c := &calls[i]
		c.def, c.ctx, c.in = task.def, ctx, ins[i]
		c.link.job = c
	}
	if err = admitBatch(p, calls); err != nil {
		p.stats.rejected.Add(uint64(len(calls)))
		for i := range calls {
			calls[i].reject(err)
		}
		return nil, err
	}
	futures := make([]*Future[Out], len(calls))
	for i := range calls {
		futures[i] = &calls[i].Future
	}
	return futures, nil
}

// admitBatch is tryAdmit for the calls of a batch, all of them or none:
// the caller's code (the tracer, encoders) runs for each before the lock;
// under it, the room for all is checked and taken at once. On error no
// call has entered the pool, and the caller rejects them all.
func admitBatch[In, Out any](p *Pool, calls []call[In, Out]) error {
	if t := p.opts.Tracer; t != nil {
		for i := range calls {
			if err := calls[i].startSpan(t, p.opts.Isolation, p.transport != nil); err != nil {
				return batchErr(i, err)
			}
		}
	}
	// The lock-free look of tryAdmit, for the whole batch.
	if p.stats.closed.Load() {
		return ErrClosed
	}
	if c := p.capacity(); c >= 0 {
		if inflight := int(p.stats.inflight.Load()); inflight+len(calls) > c {
			return p.batchFullErr(len(calls), c-inflight)
		}
	}
	for i := range calls {
		if err := calls[i].prepare(p.transport, p.stop); err != nil {
			return batchErr(i, err)
		}
	}
	def := calls[0].def
	since := now() // one clock read serves every task the batch queues
	p.mu.Lock()
	if err := p.reserve(len(calls)); err != nil {
		p.mu.Unlock()
		return err
	}
	if def.holdsIn {
		// One move for the batch, so that it too is all or nothing: a
		// Buffer that fails to move leaves every input as it was.
		ins := make([]In, len(calls))
		for i := range calls {
			ins[i] = calls[i].in
		}
		if err := shmbuf.MoveAt(&ins); err != nil {
			for range calls {
				p.release()
			}
			p.mu.Unlock()
			return err
		}
		for i := range calls {
			calls[i].in = ins[i]
		}
	}
	var idle [8]*worker // most batches wake few workers: no allocation
	wake := idle[:0]
	for i := range calls {
		calls[i].watch(p)
		if w := p.enqueue(&calls[i], since); w != nil {
			wake = append(wake, w)
		}
	}
	p.mu.Unlock()
	for _, w := range wake {
		w.wake <- struct{}{} // buffered, and w was idle: never blocks
	}
	return nil
}

// reserve takes n admission slots at once, or none: it fails with
// ErrClosed, or ErrQueueFull saying how many would fit. p.mu is held.
func (p *Pool) reserve(n int) error {
	if p.state != open {
		return ErrClosed
	}
	if c := p.capacity(); c >= 0 && p.inflight+n > c {
		return p.batchFullErr(n, c-p.inflight)
	}
	p.setInflight(p.inflight + n)
	return nil
}

// batchFullErr is the error of a batch of n tasks for which the pool has
// room for only room.
func (p *Pool) batchFullErr(n, room int) error {
	if err := p.fullErr(); err != ErrQueueFull {
		return err // no worker node: no room will come from waiting
	}
	return fmt.Errorf("%w: a batch of %d tasks, room for %d", ErrQueueFull, n, max(room, 0))
}

// batchErr says which input of a batch failed.
func batchErr(i int, err error) error {
	return fmt.Errorf("pool: SubmitAll input %d: %w", i, err)
}
