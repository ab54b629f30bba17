package pool

import (
	"context"
	"errors"
	"runtime/debug"
	"sync/atomic"

	"github.com/offloadgo/offload/transfer"
)

// job is what the queue and the workers see of a call, whatever its types.
type job interface {
	queueLink() *link
	context() context.Context
	known() bool // the task was registered
	// accept, with watch, arranges for the future to resolve when the
	// caller's ctx ends. p.mu is held.
	accept(p *Pool, watch bool)
	// begin readies the task's context; the worker calls it under the
	// pool's lock as it takes the job, so that Close can interrupt it.
	begin(stop context.Context)
	// run executes the task on the calling goroutine and claims the
	// future for its result (see conclude); it reports whether the task
	// returned an error and whether the claim was won.
	run() (failed, won bool)
	// runRemote is run for a Subprocess worker: the task runs in r's
	// process, on the input encoded by prepare or, if it can hold
	// Buffers, encoded by r with its process's Peer.
	runRemote(r runner) (failed, won bool)
	// prepare encodes (or, for an input that can hold Buffers, checks)
	// the input for a Subprocess pool, before admission, so that a value
	// that can't cross fails at once and costs no slot.
	prepare(codec remote) error
	// moveIn hands the *transfer.Buffers in a task's input over to the
	// call, once it is admitted (a rejected call must leave the caller's
	// Buffers alone). p.mu is held.
	moveIn() error
	// dropInput frees the Buffers moveIn handed to a job that leaves the
	// queue without running (its caller gave up, the pool closed, or
	// QueueDelay shed it); nobody else would. p.mu is held.
	dropInput()
	// wake wakes the caller of a future that run claimed and filled, once
	// the worker has done its bookkeeping.
	wake()
	// fail resolves the future with err unless it has resolved already,
	// counting it in tally first, and cancels the task's context if it is
	// running.
	fail(err error, tally *atomic.Uint64) bool
	// forget drops the input and the caller's ctx (and what the pool
	// derived from it) once the job has run, or has left the queue for
	// good. p.mu is held.
	forget()
	// drop says the pool is done with the job (see call.refs).
	drop()
}

// call is one submission: the task, its input, and its future. One
// allocation holds all of it, queue link included; Run reuses them.
type call[In, Out any] struct {
	Future[Out]
	link link
	def  *taskDef[In, Out] // nil for an unregistered task
	ctx  context.Context   // the caller's
	in   In

	// Set by begin, under the pool's lock.
	runCtx context.Context
	cancel context.CancelCauseFunc // when the caller's ctx can end

	// unwatch stops the AfterFunc that Submit sets on a cancellable ctx.
	unwatch func() bool

	// payload is the encoded input, for a Subprocess pool.
	payload []byte

	// refs counts who still holds a recycled call: Run's caller and the
	// pool (queue or worker). The last to let go puts it back in
	// def.calls. Submit's calls are never recycled (their Future is the
	// user's) and keep refs at 0.
	refs atomic.Int32
}

// newCall returns a call for Submit: its Future belongs to the caller.
func newCall[In, Out any](ctx context.Context, t Task[In, Out], in In) *call[In, Out] {
	c := &call[In, Out]{def: t.def, ctx: ctx, in: in}
	c.link.job = c
	return c
}

// reuseCall returns a recycled call for Run, whose caller lets go of it
// with drop once it has read the result.
func reuseCall[In, Out any](ctx context.Context, t Task[In, Out], in In) *call[In, Out] {
	if t.def == nil {
		return newCall(ctx, t, in) // an unregistered task: admit rejects it
	}
	c, _ := t.def.calls.Get().(*call[In, Out])
	if c == nil {
		c = &call[In, Out]{}
		c.signal = make(chan struct{}, 1)
		c.link.job = c
	}
	c.def, c.ctx, c.in = t.def, ctx, in
	c.refs.Store(2)
	return c
}

func (c *call[In, Out]) drop() {
	if c.refs.Load() == 0 || c.refs.Add(-1) != 0 {
		return
	}
	signal, def := c.signal, c.def
	*c = call[In, Out]{}
	c.signal = signal
	c.link.job = c
	def.calls.Put(c)
}

func (c *call[In, Out]) queueLink() *link         { return &c.link }
func (c *call[In, Out]) context() context.Context { return c.ctx }
func (c *call[In, Out]) known() bool              { return c.def != nil }

func (c *call[In, Out]) accept(p *Pool, watch bool) {
	if ctx := c.ctx; watch && ctx.Done() != nil {
		// The func reads its own copy of ctx: it may run after forget.
		c.unwatch = context.AfterFunc(ctx, func() { p.abandon(c, ctx.Err()) })
	}
}

func (c *call[In, Out]) begin(stop context.Context) {
	switch {
	case c.ctx == context.Background() || c.ctx == context.TODO():
		// No values and no end of its own: the pool's stop context is
		// equivalent, and costs nothing.
		c.runCtx = stop
	case c.ctx.Done() == nil:
		c.runCtx = &stopCtx{Context: c.ctx, stop: stop}
	default:
		c.runCtx, c.cancel = context.WithCancelCause(c.ctx)
	}
}

func (c *call[In, Out]) moveIn() (err error) {
	if c.def.holdsIn {
		c.in, err = transfer.HandOver(c.in)
	}
	return err
}

func (c *call[In, Out]) dropInput() {
	if c.def.holdsIn {
		transfer.ReleaseAll(c.in)
	}
}

func (c *call[In, Out]) run() (failed, won bool) {
	out, err := c.invoke()
	if err == nil && c.def.holdsOut {
		// Returning a Buffer hands it to the caller.
		out, err = transfer.HandOver(out)
	}
	if c.def.holdsIn {
		// The task owned its input Buffers; those it neither released nor
		// returned are freed now rather than leak arena space.
		transfer.ReleaseAll(c.in)
	}
	c.finish()
	return c.conclude(out, err)
}

// conclude claims the future for a finished task's result and stores the
// result in it, for wake to announce once the worker has freed the task's
// slot; if the caller gave up first, the Buffers the task returned are
// freed instead. A caller whose ctx has ended is owed the ctx error even
// if nobody has failed the future yet: the task may have returned because
// of that end, with a result that means nothing. (finish has stopped the
// AfterFunc that would have failed it, so conclude delivers the error.)
func (c *call[In, Out]) conclude(out Out, err error) (failed, won bool) {
	if c.cancel != nil {
		if end := c.ctx.Err(); end != nil && !errors.Is(err, end) {
			if c.def.holdsOut {
				transfer.ReleaseAll(out)
			}
			var zero Out
			out, err = zero, end
		}
	}
	if !c.claim() {
		if c.def.holdsOut {
			transfer.ReleaseAll(out)
		}
		return err != nil, false
	}
	c.out, c.err = out, err
	return err != nil, true
}

// finish stops what begin and accept set up, once the task has run.
func (c *call[In, Out]) finish() {
	if c.cancel != nil {
		c.cancel(nil)
	}
	if c.unwatch != nil {
		c.unwatch()
	}
}

// forget lets go of all the call held for the task: a caller may keep a
// Submit'ed Future long after it resolved, and it must not keep the input
// (or its encoded body, which the pool may be reusing) or the caller's ctx
// (a request's context may carry much) alive. It runs under p.mu because
// fail, the only other reader of cancel and unwatch by then, does; the
// AfterFunc has its own copy of ctx.
func (c *call[In, Out]) forget() {
	var zero In
	c.in, c.payload = zero, nil
	c.ctx, c.runCtx, c.cancel, c.unwatch = nil, nil, nil, nil
}

func (c *call[In, Out]) prepare(codec remote) (err error) {
	switch {
	case codec == nil:
	case c.def.holdsIn:
		// Encoded at send time by the process's Peer; moveIn hands the
		// Buffers to the call at admission.
		err = codec.check(c.def.name, c.in)
	default:
		c.payload, err = codec.encode(c.def.name, c.in)
	}
	return err
}

func (c *call[In, Out]) runRemote(r runner) (failed, won bool) {
	var out Out
	m := message{task: c.def.name, payload: c.payload, out: &out, outMoves: c.def.holdsOut}
	if c.def.holdsIn {
		m.in = c.in
	}
	err := r.exchange(c.runCtx, m)
	if c.def.holdsIn {
		// Sent Buffers are detached; those never sent (the process did not
		// start, the send failed) were the call's and are freed.
		transfer.ReleaseAll(c.in)
	}
	c.finish()
	return c.conclude(out, err)
}

// invoke runs the task, turning a panic into a *PanicError.
func (c *call[In, Out]) invoke() (out Out, err error) {
	defer func() {
		if v := recover(); v != nil {
			err = &PanicError{Task: c.def.name, Value: v, Stack: debug.Stack()}
		}
	}()
	return c.def.fn(c.runCtx, c.in)
}

func (c *call[In, Out]) fail(err error, tally *atomic.Uint64) bool {
	// Claim before cancelling the task's ctx, so that a task that returns
	// as soon as it sees the end can't claim the future with its own
	// result first.
	claimed := c.claim()
	if c.cancel != nil {
		c.cancel(err)
	}
	if c.unwatch != nil {
		c.unwatch()
	}
	if !claimed {
		return false
	}
	tally.Add(1)
	var zero Out
	c.settle(zero, err)
	return true
}

// stopCtx is a task's context when the caller's never ends but carries
// values: it keeps the values and ends when the pool closes.
type stopCtx struct {
	context.Context
	stop context.Context
}

func (c *stopCtx) Done() <-chan struct{} { return c.stop.Done() }
func (c *stopCtx) Err() error            { return c.stop.Err() }
