package pool

import (
	"context"
	"fmt"
	"iter"

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
// as Submit's do (each a context of its own; ctx is read once for the
// batch), are queued in input order (so a FIFO pool starts them in that
// order), are traced and labelled like Submit's, and resolve exactly
// once. When ctx ends, every Future not
// yet resolved resolves with ctx's error, and the tasks still queued
// leave the queue at once. The inputs' *transfer.Buffers move only once
// the batch is admitted, all together: one that can't move (it is
// detached) fails the batch and leaves the others with the caller. Give
// a Buffer in one input only: given in two, it moves once and both tasks
// get the same handle.
//
// It fails with ErrClosed after Shutdown or Close, ErrUnknownTask for a
// Task not made by Register, and at once with ctx's error if ctx has
// ended; an input that can't be encoded for a worker process fails the
// whole batch with that input's error. An empty batch gets the same
// checks, but never ErrQueueFull, and returns nil, nil: there is nothing
// to wait for. Safe for concurrent use; it never waits for room (see
// SubmitBlocking for that, one task at a time).
//
// The batch's tasks are allocated in chunks: a Future kept after the
// others are dropped keeps up to 63 of its neighbours' results alive too.
func SubmitAll[In, Out any](ctx context.Context, p *Pool, task Task[In, Out], ins []In) ([]*Future[Out], error) {
	if err := p.usable(); err != nil {
		return nil, err
	}
	end, err := readSubmission(ctx, task.def != nil, true)
	if err == nil {
		err = task.def.unfit.on(p.opts.placement)
	}
	if len(ins) == 0 || err != nil {
		if err == nil && p.stats.closed.Load() {
			err = ErrClosed // an empty batch is refused as any other would be
		}
		p.stats.rejected.Add(uint64(len(ins)))
		return nil, err
	}
	b := newBatch(task.def, ctx, end, ins)
	if err = admitBatch(p, b, len(ins)); err != nil {
		p.stats.rejected.Add(uint64(len(ins)))
		for _, c := range b.all() {
			c.reject(err)
		}
		return nil, err
	}
	futures := make([]*Future[Out], 0, len(ins))
	for _, c := range b.all() {
		futures = append(futures, &c.Future)
	}
	return futures, nil
}

// batch is a SubmitAll's calls, in input order, allocated in chunks of
// batchChunk: a small allocation reuses warm memory where one of the
// batch's size would take fresh pages (and fault them in) each time, and
// a Future kept alone keeps only its chunk alive.
type batch[In, Out any] [][]call[In, Out]

const batchChunk = 64

func newBatch[In, Out any](def *taskDef[In, Out], ctx context.Context, end callerEnd, ins []In) batch[In, Out] {
	b := make(batch[In, Out], 0, (len(ins)+batchChunk-1)/batchChunk)
	for len(ins) > 0 {
		chunk := make([]call[In, Out], min(len(ins), batchChunk))
		for i := range chunk {
			c := &chunk[i]
			c.def, c.ctx, c.end, c.in = def, ctx, end, ins[i]
			c.link.job = c
		}
		b = append(b, chunk)
		ins = ins[len(chunk):]
	}
	return b
}

// all yields the batch's calls in input order, each with its index.
func (b batch[In, Out]) all() iter.Seq2[int, *call[In, Out]] {
	return func(yield func(int, *call[In, Out]) bool) {
		k := 0
		for _, chunk := range b {
			for i := range chunk {
				if !yield(k, &chunk[i]) {
					return
				}
				k++
			}
		}
	}
}

// first and last are the batch's first and last calls; a batch is never
// empty.
func (b batch[In, Out]) first() *call[In, Out] { return &b[0][0] }
func (b batch[In, Out]) last() *call[In, Out] {
	chunk := b[len(b)-1]
	return &chunk[len(chunk)-1]
}

// admitBatch is tryAdmit for the n calls of a batch, all of them or none:
// the caller's code (the tracer, encoders) runs for each before the lock;
// under it, the room for all is checked and taken at once, and the batch
// joins the queue in one splice. On error no call has entered the pool,
// and the caller rejects them all.
func admitBatch[In, Out any](p *Pool, b batch[In, Out], n int) error {
	if t := p.opts.Tracer; t != nil {
		if err := b.startSpans(p, t); err != nil {
			return err
		}
	}
	if err := p.batchRefusal(n); err != nil {
		return err
	}
	if err := b.prepare(p); err != nil {
		return err
	}
	first := b.first()
	b.chain(p.clock.now()) // one clock read serves every task the batch queues
	p.mu.Lock()
	if err := p.reserve(n); err != nil {
		p.mu.Unlock()
		return err
	}
	if first.def.holdsIn {
		if err := b.moveInputs(n); err != nil {
			for range n {
				p.release()
			}
			p.mu.Unlock()
			return err
		}
	}
	if first.end.done != nil { // the batch shares one ctx
		for _, c := range b.all() {
			c.watch(p)
		}
	}
	var idle [8]*worker // most batches wake few workers: no allocation
	wake := p.enqueueChain(&first.link, &b.last().link, n, idle[:0])
	p.publishGauges()
	p.mu.Unlock()
	for _, w := range wake {
		w.wake <- struct{}{} // buffered, and w was idle: never blocks
	}
	return nil
}

// startSpans starts the span of each of the batch's calls with the pool's
// Tracer t: the caller's code, before the lock.
func (b batch[In, Out]) startSpans(p *Pool, t Tracer) error {
	for k, c := range b.all() {
		if err := c.startSpan(t, p.opts.Isolation, p.transport != nil); err != nil {
			return batchErr(k, err)
		}
	}
	return nil
}

// batchRefusal is refusal for a batch of n tasks: the lock-free look of
// tryAdmit, for the whole batch.
func (p *Pool) batchRefusal(n int) error {
	if p.stats.closed.Load() {
		return ErrClosed
	}
	if c := p.capacity(); c >= 0 {
		if inflight := p.stats.gauges.inflight(); inflight+n > c {
			return p.batchFullErr(n, c-inflight)
		}
	}
	return nil
}

// prepare prepares each of the batch's calls for p (see call.prepare):
// their encoders run here, before the lock.
func (b batch[In, Out]) prepare(p *Pool) error {
	for k, c := range b.all() {
		if err := c.prepare(p.transport, p.stop); err != nil {
			return batchErr(k, err)
		}
	}
	return nil
}

// moveInputs moves the Buffers of the batch's n inputs to its calls in
// one move, so that it too is all or nothing: a Buffer that fails to move
// leaves every input as it was.
func (b batch[In, Out]) moveInputs(n int) error {
	ins := make([]In, 0, n)
	for _, c := range b.all() {
		ins = append(ins, c.in)
	}
	if err := shmbuf.MoveAt(&ins); err != nil {
		return err
	}
	for k, c := range b.all() {
		c.in = ins[k]
	}
	return nil
}

// chain links the calls' queue links in order, as queued at since, ready
// for enqueueChain to splice into the queue: done before the lock, it
// keeps a large batch from holding the lock for its length.
func (b batch[In, Out]) chain(since int64) {
	var prev *link
	for _, c := range b.all() {
		l := &c.link
		l.queued, l.since, l.prev = true, since, prev
		if prev != nil {
			prev.next = l
		}
		prev = l
	}
}

// enqueueChain is enqueue for the n jobs of a chain from first to last
// (see chain): the oldest go to idle workers while nothing is queued ahead
// of them, the rest join the queue in one splice, and as many workers as
// they need are woken or started, up to Workers. It returns wake with the
// workers to wake once p.mu is released. p.mu is held and the jobs' slots
// are counted in p.inflight.
func (p *Pool) enqueueChain(first, last *link, n int, wake []*worker) []*worker {
	p.stats.submitted += uint64(n)
	for ; first != nil && len(p.idle) > 0 && p.queue.n == 0; n-- {
		w := p.idle[len(p.idle)-1]
		p.idle = p.idle[:len(p.idle)-1]
		l := first
		if first = l.next; first != nil {
			first.prev = nil
		}
		l.prev, l.next, l.queued = nil, nil, false
		w.handoff = l.job
		p.assign(w, l.job)
		wake = append(wake, w)
	}
	if first == nil {
		return wake
	}
	if p.queue.n == 0 {
		p.lastEmpty = first.since // empty until now, for QueueDelay
	}
	p.queue.pushChain(first, last, n)
	p.stats.queued.Store(int64(p.queue.n))
	for ; n > 0 && len(p.idle) > 0; n-- {
		wake = append(wake, p.idle[len(p.idle)-1])
		p.idle = p.idle[:len(p.idle)-1]
	}
	for ; n > 0 && p.staying() < p.opts.Workers; n-- {
		p.spawn()
	}
	return wake
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
