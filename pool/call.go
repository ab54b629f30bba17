package pool

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/offloadgo/offload/internal/seam"
	"github.com/offloadgo/offload/internal/shmbuf"
)

// call is one submission: the task, its input, and its future. One
// allocation holds all of it, queue link included; Run reuses them. This
// file has its way in; callrun.go its run and its ends.
type call[In, Out any] struct {
	Future[Out]
	link link
	def  *taskDef[In, Out] // nil for an unregistered task
	ctx  context.Context   // the caller's
	in   In

	// Set by prepare, before admission: the task's context, and its cancel
	// when the caller's ctx can end.
	runCtx context.Context
	cancel context.CancelCauseFunc

	// unwatch stops the AfterFunc that Submit sets on a cancellable ctx.
	unwatch func() bool

	// payload is the encoded input, and deadline the caller's ctx's, for
	// a transport.
	payload  []byte
	deadline time.Time

	// span is the task's span when the pool has a Tracer (see tracer.go),
	// nil once ended; trace the caller's trace context, encoded for a
	// transport.
	span  TaskSpan
	trace []byte

	// handover says whether a transport has sent the call to its worker.
	handover seam.Handover

	// refs counts who still holds a recycled call: Run's caller and the
	// pool (queue or worker). The last to let go puts it back in recycle.
	// Submit's calls are never recycled (their Future is the user's) and
	// keep refs at 0. Read and lowered atomically; set plainly while the
	// call is its caller's alone (a locked store there costs every Run).
	refs    int32
	recycle *sync.Pool // where drop puts a call of Run's; nil: nowhere

	// freed, if set, is called once the call's slot is free again, after
	// its worker is done with it (a worker node's calls: see submitAny).
	freed func()
}

// newCall returns a call for Submit: its Future belongs to the caller.
func newCall[In, Out any](ctx context.Context, t Task[In, Out], in In) *call[In, Out] {
	c := &call[In, Out]{def: t.def, ctx: ctx, in: in}
	c.link.job = c
	return c
}

// reuseCall returns a call for Run, recycled by p where it can be, whose
// caller lets go of it with drop once it has read the result.
func reuseCall[In, Out any](ctx context.Context, p *Pool, t Task[In, Out], in In) *call[In, Out] {
	if t.def == nil {
		return newCall(ctx, t, in) // an unregistered task: admit rejects it
	}
	recycle := p.recycled(t.def.index, t.def)
	var c *call[In, Out]
	if recycle != nil {
		c, _ = recycle.Get().(*call[In, Out])
	}
	if c == nil {
		c = &call[In, Out]{recycle: recycle}
		c.signal = make(chan struct{}, 1)
		c.link.job = c
	}
	c.def, c.ctx, c.in = t.def, ctx, in
	c.refs = 2
	return c
}

func (c *call[In, Out]) drop() {
	if atomic.LoadInt32(&c.refs) == 0 || atomic.AddInt32(&c.refs, -1) != 0 || c.recycle == nil {
		return
	}
	signal, recycle := c.signal, c.recycle
	*c = call[In, Out]{}
	c.signal, c.recycle = signal, recycle
	c.link.job = c
	recycle.Put(c)
}

// recycled is where p keeps Run's spent calls of the task with this
// registry index, or of the closures def runs (index -1); nil for a task
// registered after New, or a Pool not made by New. Each pool keeps its
// own, not one per task for the process: a call's channel belongs to the
// synctest bubble, if any, of the goroutine that made it, and every user
// of a pool made in a bubble is in it.
func (p *Pool) recycled(index int, def any) *sync.Pool {
	switch {
	case p == nil || p.calls == nil:
		return nil
	case index < 0:
		if r, ok := p.closureCalls.Load(def); ok {
			return r.(*sync.Pool)
		}
		r, _ := p.closureCalls.LoadOrStore(def, new(sync.Pool))
		return r.(*sync.Pool)
	case index >= len(p.calls):
		return nil
	}
	return &p.calls[index]
}

func (c *call[In, Out]) freedSlot() {
	c.endSpan() // if wake did not: the task never ran, or its caller heard of its end from elsewhere
	if c.freed != nil {
		c.freed()
	}
}

// wake ends the task's span, then wakes its caller: a caller who has its
// result finds the span ended.
func (c *call[In, Out]) wake() {
	c.endSpan()
	c.Future.wake()
}

func (c *call[In, Out]) queueLink() *link         { return &c.link }
func (c *call[In, Out]) context() context.Context { return c.ctx }
func (c *call[In, Out]) name() string             { return c.def.name }

func (c *call[In, Out]) check() error { return submissionErr(c.ctx, c.def != nil) }

// submissionErr refuses a submission to ctx of a task, registered or not,
// before any work: Submit's and SubmitAll's check.
func submissionErr(ctx context.Context, registered bool) error {
	switch {
	case ctx == nil:
		return errNilContext
	case !registered:
		return ErrUnknownTask
	}
	return ctx.Err()
}

func (c *call[In, Out]) prepare(tr seam.Carrier, stop context.Context) (err error) {
	if tr != nil {
		if c.payload, err = tr.Encode(c.def.name, c.trace, c.in, c.def.holdsIn); err != nil {
			return err
		}
		// A task run elsewhere sees none of ctx's values, and its runner
		// must not call ctx's methods on the worker goroutine (they may
		// panic or block): it gets a context of the pool's own that ends
		// when ctx does, and ctx's deadline, read here.
		c.deadline, _ = c.ctx.Deadline()
		if c.ctx.Done() == nil {
			c.runCtx = stop
		} else {
			c.runCtx, c.cancel = context.WithCancelCause(c.ctx)
		}
		return nil
	}
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
	return nil
}

func (c *call[In, Out]) reject(err error) {
	if c.cancel != nil {
		c.cancel(nil)
	}
	if c.span != nil {
		c.span.End(err)
		c.span = nil
	}
	c.drop() // the pool's hold
	c.drop() // the caller's: it gets an error, not the call
}

func (c *call[In, Out]) enter(p *Pool, watch bool) error {
	if c.def.holdsIn {
		if err := shmbuf.MoveAt(&c.in); err != nil {
			return err
		}
	}
	if watch {
		c.watch(p)
	}
	return nil
}

// watch sets the future to resolve when the caller's ctx ends (see
// job.enter). p.mu is held.
func (c *call[In, Out]) watch(p *Pool) {
	if c.cancel != nil {
		// The func reads its own copy of the context: it may run after
		// forget. Only the caller's end ends it: finish and fail stop it
		// before they cancel the context themselves.
		ctx := c.runCtx
		c.unwatch = context.AfterFunc(ctx, func() { p.abandon(c, ctx.Err()) })
	}
}

// stopCtx is a task's context when the caller's never ends but carries
// values: it keeps the values and ends when the pool closes, with the
// pool's cause (ErrClosed) for context.Cause, which finds the cancelCtx
// to ask through Value.
type stopCtx struct {
	context.Context
	stop context.Context
}

func (c *stopCtx) Done() <-chan struct{} { return c.stop.Done() }
func (c *stopCtx) Err() error            { return c.stop.Err() }

func (c *stopCtx) Value(key any) any {
	if v := c.Context.Value(key); v != nil {
		return v
	}
	return c.stop.Value(key)
}
