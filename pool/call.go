package pool

import (
	"context"
	"fmt"
	"runtime/debug"
	"sync/atomic"

	"github.com/offloadgo/offload/internal/xfer"
)

// job is what the queue and the workers see of a call, whatever its types.
type job interface {
	queueLink() *link
	context() context.Context
	known() bool // the task was registered
	// derive makes the task's context from the caller's, before the pool's
	// lock is taken: it is the last step of a submission that calls into
	// the caller's ctx (see admit). discard undoes it for a submission
	// that is refused.
	derive(stop context.Context)
	discard()
	// accept, with watch, arranges for the future to resolve when the
	// caller's ctx ends. It watches the derived context, which is the
	// pool's own, so that no caller code runs under the lock. p.mu is held.
	accept(p *Pool, watch bool)
	// run executes the task on the calling goroutine and claims the
	// future for its result (see conclude).
	run() outcome
	// runRemote is run for a Subprocess worker: the task runs in r's
	// process, on the input encoded by prepare or, if it can hold
	// Buffers, encoded by r with its process's Peer.
	runRemote(r runner) outcome
	// exited ends a job whose task called runtime.Goexit on the worker's
	// goroutine, as run would have had the task returned ErrGoexit.
	exited() outcome
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
	// counting it in tally first, and cancels the task's context.
	fail(err error, tally *atomic.Uint64) bool
	// quit resolves the future of a running task whose caller's ctx ended
	// with end (see quitErr), or of one the pool closed under it (end is
	// ErrClosed).
	quit(end error, tally *atomic.Uint64)
	// forget drops the input and the caller's ctx (and what the pool
	// derived from it) once the job has run, or has left the queue for
	// good. p.mu is held.
	forget()
	// drop says the pool is done with the job (see call.refs).
	drop()
}

// outcome is how a job that ran ended for its caller, for the counters.
type outcome uint8

const (
	lost      outcome = iota // resolved by someone else first, who counted it
	completed                // the task's result
	failed                   // the task's error, or its panic
	canceled                 // the caller's ctx ended: the caller got its error
)

// call is one submission: the task, its input, and its future. One
// allocation holds all of it, queue link included; Run reuses them.
type call[In, Out any] struct {
	Future[Out]
	link link
	def  *taskDef[In, Out] // nil for an unregistered task
	ctx  context.Context   // the caller's
	in   In

	// Set by derive, before admission: the task's context, and its cancel
	// when the caller's ctx can end.
	runCtx context.Context
	cancel context.CancelCauseFunc

	// unwatch stops the AfterFunc that Submit sets on a cancellable ctx.
	unwatch func() bool

	// payload is the encoded input, for a Subprocess pool.
	payload []byte

	// handover says whether a Subprocess runner has sent the call to its
	// process.
	handover handover

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

func (c *call[In, Out]) derive(stop context.Context) {
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

func (c *call[In, Out]) discard() {
	if c.cancel != nil {
		c.cancel(nil)
	}
}

func (c *call[In, Out]) accept(p *Pool, watch bool) {
	if watch && c.cancel != nil {
		// The func reads its own copy of the context: it may run after
		// forget. Only the caller's end ends it: finish and fail stop it
		// before they cancel the context themselves.
		ctx := c.runCtx
		c.unwatch = context.AfterFunc(ctx, func() { p.abandon(c, ctx.Err()) })
	}
}

func (c *call[In, Out]) moveIn() (err error) {
	if c.def.holdsIn {
		err = xfer.HandOverAt(&c.in)
	}
	return err
}

func (c *call[In, Out]) dropInput() {
	if c.def.holdsIn {
		xfer.ReleaseAll(c.in)
	}
}

func (c *call[In, Out]) run() outcome {
	out, err := c.invoke()
	if err == nil && c.def.holdsOut {
		// Returning a Buffer hands it to the caller.
		err = xfer.HandOverAt(&out)
	}
	c.ran()
	return c.conclude(out, err)
}

func (c *call[In, Out]) exited() outcome {
	c.ran()
	var zero Out
	return c.conclude(zero, fmt.Errorf("%w: task %q did not return (t.FailNow or the like on its goroutine)", ErrGoexit, c.def.name))
}

// ran is what follows a task's run whatever its end: the input Buffers
// the task neither released nor returned are freed rather than leak arena
// space, and what derive and accept set up is stopped.
func (c *call[In, Out]) ran() {
	if c.def.holdsIn {
		xfer.ReleaseAll(c.in)
	}
	c.finish()
}

// conclude claims the future for a finished task's result and stores the
// result in it, for wake to announce once the worker has freed the task's
// slot; if the caller gave up first, the Buffers the task returned are
// freed instead. A caller whose ctx has ended is owed the ctx error (see
// quitErr) even if nobody has failed the future yet: the task may have
// returned because of that end, with a result that means nothing, and it
// counts as Canceled whoever resolves it. (finish has stopped the
// AfterFunc that would have failed it, so conclude delivers the error.)
func (c *call[In, Out]) conclude(out Out, err error) outcome {
	result := completed
	if err != nil {
		result = failed
	}
	if c.cancel != nil {
		if end := c.ctx.Err(); end != nil {
			if c.def.holdsOut {
				xfer.ReleaseAll(out)
			}
			var zero Out
			out, err, result = zero, c.quitErr(end), canceled
		}
	}
	if !c.claim() {
		if c.def.holdsOut {
			xfer.ReleaseAll(out)
		}
		return lost
	}
	c.out, c.err = out, err
	return result
}

// finish stops what derive and accept set up, once the task has run: the
// watch first, so that cancelling the task's context doesn't fire it.
func (c *call[In, Out]) finish() {
	if c.unwatch != nil {
		c.unwatch()
	}
	if c.cancel != nil {
		c.cancel(nil)
	}
}

// forget lets go of all the call held for the task: a caller may keep a
// Submit'ed Future long after it resolved, and it must not keep the input
// (or its encoded body, which the pool may be reusing) or the caller's ctx
// (a request's context may carry much) alive. It runs under p.mu because
// fail, the only other reader of cancel and unwatch by then, does; the
// AfterFunc has its own copy of the context.
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

func (c *call[In, Out]) runRemote(r runner) outcome {
	var out Out
	m := message{task: c.def.name, payload: c.payload, out: &out, outMoves: c.def.holdsOut, handover: &c.handover}
	if c.def.holdsIn {
		m.in, m.retake = c.in, c
	}
	err := r.exchange(c.runCtx, m)
	c.ran() // sent Buffers are detached; those never sent were the call's
	return c.conclude(out, err)
}

// retake decodes the input a dead process never read with the Peer it
// was encoded with: its Buffers come back from that Peer's books, as live
// handles in a new input that the call owns instead.
func (c *call[In, Out]) retake(peer xfer.Peer, data []byte) (any, error) {
	var in In
	if err := peerUnmarshal(peer, data, &in); err != nil {
		return nil, err
	}
	c.in = in
	return in, nil
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
	// result first; stop the watch before cancelling, so that it doesn't
	// fire for our own cancel.
	claimed := c.claim()
	if c.unwatch != nil {
		c.unwatch()
	}
	if c.cancel != nil {
		c.cancel(err)
	}
	if !claimed {
		return false
	}
	tally.Add(1)
	var zero Out
	c.settle(zero, err)
	return true
}

func (c *call[In, Out]) quit(end error, tally *atomic.Uint64) {
	c.handover.quit()
	c.fail(c.quitErr(end), tally)
}

// quitErr is the error of a running task whose caller's ctx ended with
// end (or that the pool closed, end ErrClosed): end itself, and also
// ErrTerminated if the task was sent to a worker process, which is
// terminated for it.
func (c *call[In, Out]) quitErr(end error) error {
	if c.handover.terminates() {
		return withCause(ErrTerminated, end)
	}
	return end
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
