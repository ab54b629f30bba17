package pool

import (
	"context"
	"sync"
	"sync/atomic"

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
	ctx  context.Context   // the caller's: for its values, which InProcess tasks see
	in   In

	// end is how the caller's ctx ends, read by check: the pool works
	// from it, never from ctx's methods (see callerEnd).
	end callerEnd

	// Set by prepare, before admission: the task's context, and its cancel
	// unless it is the pool's stop context.
	runCtx context.Context
	cancel context.CancelCauseFunc

	// unwatch stops the AfterFunc that Submit sets on a ctx of package
	// context's making (see watch).
	unwatch func() bool

	// payload is the encoded input, for a transport.
	payload []byte

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

func (c *call[In, Out]) queueLink() *link      { return &c.link }
func (c *call[In, Out]) callerEnd() *callerEnd { return &c.end }
func (c *call[In, Out]) name() string          { return c.def.name }

func (c *call[In, Out]) check(watched bool) (err error) {
	c.end, err = readSubmission(c.ctx, c.def != nil, watched)
	return err
}

// readSubmission refuses a submission to ctx of a task, registered or
// not, before any work, or reads how ctx ends (see readEnd): Submit's and
// SubmitAll's check.
func readSubmission(ctx context.Context, registered, watched bool) (callerEnd, error) {
	switch {
	case ctx == nil:
		return callerEnd{}, errNilContext
	case !registered:
		return callerEnd{}, ErrUnknownTask
	}
	return readEnd(ctx, watched)
}

// prepare encodes the input for tr, if the task crosses, and derives the
// task's context from what check read of the caller's: never from the
// caller's ctx itself, whose methods the derivation would call, and
// package context's goroutines with it (see callerEnd). A task run
// elsewhere sees none of ctx's values; its runner gets the deadline in the
// call.
func (c *call[In, Out]) prepare(tr seam.Carrier, stop context.Context) (err error) {
	parent := context.Background()
	if tr != nil {
		if c.payload, err = tr.Encode(c.def.name, c.trace, c.in, c.def.inForm()); err != nil {
			return err
		}
		if c.end.done == nil {
			c.runCtx = stop // it ends when the pool closes, and costs nothing
			return nil
		}
	} else {
		switch {
		case c.end.done != nil:
			parent = &taskParent{values: c.ctx, deadline: c.end.deadline}
		case c.ctx == context.Background() || c.ctx == context.TODO():
			// No values and no end of its own: the pool's stop context is
			// equivalent, and costs nothing.
			c.runCtx = stop
			return nil
		default:
			// Values, and no end but the pool's: no cancel of its own.
			c.runCtx = &stoppedTask{taskParent{values: c.ctx, deadline: c.end.deadline}, stop}
			return nil
		}
	}
	c.runCtx, c.cancel = context.WithCancelCause(parent)
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
// job.enter). p.mu is held: nothing here calls the caller's code. A ctx
// of package context's making is followed by context.AfterFunc on the
// cancellable ctx readEnd found behind it; any other, by a goroutine that
// waits on its Done channel (package context would start one too, and
// call the ctx's methods from it).
func (c *call[In, Out]) watch(p *Pool) {
	done := c.end.done
	if done == nil {
		return
	}
	// The func keeps its own copy of what it reads: it may run after
	// forget. finish and fail stop it before they cancel the task's
	// context themselves.
	std := c.end.std
	c.end.std = nil // not kept past here: it holds the caller's ctx
	end := c.end
	abandon := func() { p.abandon(c, end.err()) }
	if std != nil {
		c.unwatch = context.AfterFunc(std, abandon)
		return
	}
	afterEnd(done, c.runCtx.Done(), abandon)
}
