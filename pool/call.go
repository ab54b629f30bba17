package pool

import (
	"context"
	"runtime/debug"
)

// job is what the queue and the workers see of a call, whatever its types.
type job interface {
	queueLink() *link
	context() context.Context
	known() bool // the task was registered
	// accept records the admission time and, with watch, arranges for the
	// future to resolve when the caller's ctx ends. p.mu is held.
	accept(p *Pool, at int64, watch bool)
	acceptedAt() int64
	resolvedAlready() bool
	// begin readies the task's context; the worker calls it under the
	// pool's lock as it takes the job, so that Close can interrupt it.
	begin(stop context.Context)
	// run executes the task on the calling goroutine and resolves the
	// future; it reports whether the task returned an error.
	run() (failed, delivered bool)
	// fail resolves the future with err unless it has resolved already,
	// and cancels the task's context if it is running.
	fail(err error) bool
}

// call is one submission: the task, its input, and its future. One
// allocation holds all of it, queue link included.
type call[In, Out any] struct {
	Future[Out]
	link     link
	task     Task[In, Out]
	ctx      context.Context // the caller's
	in       In
	accepted int64 // monotonic ns, for Stats.WaitTime

	// Set by begin, under the pool's lock.
	runCtx  context.Context
	cancel  context.CancelCauseFunc // when the caller's ctx can end
	bounded stopCtx                 // runCtx when the caller's ctx can't

	// unwatch stops the AfterFunc that Submit sets on a cancellable ctx.
	unwatch func() bool
}

func newCall[In, Out any](ctx context.Context, t Task[In, Out], in In) *call[In, Out] {
	c := &call[In, Out]{task: t, ctx: ctx, in: in}
	c.done = make(chan struct{})
	c.link.job = c
	return c
}

func (c *call[In, Out]) queueLink() *link         { return &c.link }
func (c *call[In, Out]) context() context.Context { return c.ctx }
func (c *call[In, Out]) known() bool              { return c.task.fn != nil }
func (c *call[In, Out]) acceptedAt() int64        { return c.accepted }
func (c *call[In, Out]) resolvedAlready() bool    { return c.resolved.Load() }

func (c *call[In, Out]) accept(p *Pool, at int64, watch bool) {
	c.accepted = at
	if watch && c.ctx.Done() != nil {
		c.unwatch = context.AfterFunc(c.ctx, func() { p.abandon(c, c.ctx.Err()) })
	}
}

func (c *call[In, Out]) begin(stop context.Context) {
	if c.ctx.Done() == nil {
		// The caller's ctx never ends: only the pool's closing can stop the
		// task, and that needs no allocation.
		c.bounded = stopCtx{Context: c.ctx, stop: stop}
		c.runCtx = &c.bounded
		return
	}
	c.runCtx, c.cancel = context.WithCancelCause(c.ctx)
}

func (c *call[In, Out]) run() (failed, delivered bool) {
	out, err := c.invoke()
	if c.cancel != nil {
		c.cancel(nil)
	}
	if c.unwatch != nil {
		c.unwatch()
	}
	return err != nil, c.resolve(out, err)
}

// invoke runs the task, turning a panic into a *PanicError.
func (c *call[In, Out]) invoke() (out Out, err error) {
	defer func() {
		if v := recover(); v != nil {
			err = &PanicError{Task: c.task.name, Value: v, Stack: debug.Stack()}
		}
	}()
	return c.task.fn(c.runCtx, c.in)
}

func (c *call[In, Out]) fail(err error) bool {
	if c.cancel != nil {
		c.cancel(err)
	}
	if c.unwatch != nil {
		c.unwatch()
	}
	var zero Out
	return c.resolve(zero, err)
}

// stopCtx is a task's context when the caller's never ends: it carries the
// caller's values and ends when the pool closes.
type stopCtx struct {
	context.Context
	stop context.Context
}

func (c *stopCtx) Done() <-chan struct{} { return c.stop.Done() }
func (c *stopCtx) Err() error            { return c.stop.Err() }
