package pool

import (
	"context"
	"sync/atomic"

	"github.com/offloadgo/offload/internal/transport"
	"github.com/offloadgo/offload/internal/xfer"
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

	// payload is the encoded input, for a transport.
	payload []byte

	// handover says whether a transport has sent the call to its worker.
	handover transport.Handover

	// sentAt is when a transport last said the task started where it runs
	// (see transport.Call.Start), or 0; written and read by the worker
	// goroutine that runs the call.
	sentAt int64

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

func (c *call[In, Out]) check() error {
	switch {
	case c.ctx == nil:
		return errNilContext
	case c.def == nil:
		return ErrUnknownTask
	}
	return c.ctx.Err()
}

func (c *call[In, Out]) prepare(tr transport.Transport, stop context.Context) (err error) {
	if tr != nil {
		if c.payload, err = tr.Encode(c.def.name, c.in, c.def.holdsIn); err != nil {
			return err
		}
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

func (c *call[In, Out]) reject() {
	if c.cancel != nil {
		c.cancel(nil)
	}
	c.drop() // the pool's hold
	c.drop() // the caller's: it gets an error, not the call
}

func (c *call[In, Out]) enter(p *Pool, watch bool) error {
	if c.def.holdsIn {
		if err := xfer.HandOverAt(&c.in); err != nil {
			return err
		}
	}
	if watch && c.cancel != nil {
		// The func reads its own copy of the context: it may run after
		// forget. Only the caller's end ends it: finish and fail stop it
		// before they cancel the context themselves.
		ctx := c.runCtx
		c.unwatch = context.AfterFunc(ctx, func() { p.abandon(c, ctx.Err()) })
	}
	return nil
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
