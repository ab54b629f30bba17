package pool

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync/atomic"

	"github.com/offloadgo/offload/internal/codec"
	"github.com/offloadgo/offload/internal/prof"
	"github.com/offloadgo/offload/internal/seam"
	"github.com/offloadgo/offload/internal/shmbuf"
)

func (c *call[In, Out]) run(r seam.Runner, scratch *seam.Call) outcome {
	if c.span != nil {
		c.span.Dequeued(scratch.Queued)
	}
	if r != nil {
		return c.runThere(r, scratch)
	}
	out, err := c.invoke()
	if err == nil && c.def.holdsOut {
		out, err = shmbuf.Moved(out) // returning a Buffer moves it to the caller
	}
	c.ran()
	return c.conclude(out, err)
}

// runThere runs the task through r, on the payload prepare encoded or,
// for an input that can hold Buffers, on the input r encodes as it sends
// it; m is the worker's, reused call after call. (Apart from run, so that
// the output escapes to the heap only here.)
func (c *call[In, Out]) runThere(r seam.Runner, m *seam.Call) outcome {
	var out Out
	*m = seam.Call{Task: c.def.name, Payload: c.payload, Trace: c.trace, Out: &out, OutMoves: c.def.holdsOut, JSON: c.def.extern, Handover: &c.handover,
		Start: m.Start, MaxWait: m.MaxWait, Queued: m.Queued, Deadline: c.end.deadline}
	if c.def.holdsIn {
		m.In, m.Retake = c.in, c
	}
	err := c.publicErr(r.Exchange(c.runCtx, m))
	*m = seam.Call{Start: m.Start} // it would keep the input and the output alive
	c.ran()
	if errors.Is(err, ErrQueueFull) {
		return c.dropped(err)
	}
	return c.conclude(out, err)
}

// dropped is conclude for a call its runner sent nowhere, having found no
// room for it within m.MaxWait: it never ran, and counts as a task that
// QueueDelay drops from the queue, unless its caller gave up first.
func (c *call[In, Out]) dropped(err error) outcome {
	var zero Out
	if o := c.conclude(zero, err); o != failed {
		return o
	}
	return dropped
}

func (c *call[In, Out]) exited() outcome {
	c.ran()
	var zero Out
	return c.conclude(zero, fmt.Errorf("%w: task %q did not return (t.FailNow or the like on its goroutine)", ErrGoexit, c.def.name))
}

// invoke runs the task under its pprof labels, turning a panic into a
// *PanicError.
func (c *call[In, Out]) invoke() (out Out, err error) {
	c.def.labels.Set()
	defer func() {
		prof.Clear()
		if v := recover(); v != nil {
			err = &PanicError{Task: c.def.name, Value: v, Stack: debug.Stack()}
		}
	}()
	return c.def.fn(c.runCtx, c.in)
}

// publicErr turns the reports of a task run elsewhere, which transports
// return as they are, into this package's error types; the sentinels are
// this package's already.
func (c *call[In, Out]) publicErr(err error) error {
	switch e := err.(type) {
	case *seam.TaskError:
		return &RemoteError{Task: c.def.name, Message: e.Message, Type: e.Type, Traceback: e.Traceback, permanent: e.Permanent}
	case *seam.Panic:
		value := e.Value
		if te, ok := value.(*seam.TaskError); ok {
			value = &RemoteError{Task: c.def.name, Message: te.Message}
		}
		return &PanicError{Task: c.def.name, Value: value, Stack: e.Stack}
	}
	return err
}

// Retake decodes the input a dead worker process never read with the Peer
// it was encoded with: its Buffers come back from that Peer's books, as
// live handles in a new input that the call owns instead.
func (c *call[In, Out]) Retake(peer shmbuf.Peer, data []byte) (any, error) {
	var in In
	if err := codec.PeerUnmarshal(peer, data, &in); err != nil {
		return nil, err
	}
	c.in = in
	return in, nil
}

// ran is what follows a task's run whatever its end: the input Buffers
// the task neither released nor returned are freed rather than leak arena
// space (sent ones are detached already), and what prepare and enter set
// up is stopped.
func (c *call[In, Out]) ran() {
	if c.def.holdsIn {
		shmbuf.ReleaseAll(c.in)
	}
	c.finish()
}

// conclude claims the future for a finished task's result and stores the
// result in it, for wake to announce once the worker has freed the task's
// slot; if the caller gave up first, the Buffers the task returned are
// freed instead. A caller whose ctx has ended is owed the ctx error (see
// quitErr) even if nobody has failed the future yet: the task may have
// returned because of that end, with a result that means nothing, and it
// counts as Canceled whoever resolves it; so does a task that failed once
// the caller's deadline had passed. (finish has stopped the watch that
// would have failed it, so conclude delivers the error.) It reads the
// caller's ctx through c.end alone: it runs on the worker's goroutine.
func (c *call[In, Out]) conclude(out Out, err error) outcome {
	result := completed
	if err != nil {
		result = failed
	}
	if c.end.done != nil {
		var end error
		switch {
		case c.end.ended():
			end = c.end.err()
		case err != nil && c.end.pastDeadline():
			// The task failed at or after the caller's deadline, before the
			// ctx's own timer fired: a node that enforces the deadline
			// itself answers that soon. It ended because of the deadline.
			end = context.DeadlineExceeded
		}
		if end != nil {
			if c.def.holdsOut {
				shmbuf.ReleaseAll(out)
			}
			var zero Out
			out, err, result = zero, c.quitErr(end), canceled
		}
	}
	if !c.claim() {
		if c.def.holdsOut {
			shmbuf.ReleaseAll(out)
		}
		return lost
	}
	c.out, c.err = out, err
	return result
}

// finish stops what prepare and enter set up, once the task has run: the
// watch first, so that cancelling the task's context doesn't fire it.
func (c *call[In, Out]) finish() {
	if c.unwatch != nil {
		c.unwatch()
	}
	if c.cancel != nil {
		c.cancel(nil)
	}
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
	c.complete(zero, err)
	return true
}

func (c *call[In, Out]) quit(end error, tally *atomic.Uint64) {
	c.handover.Quit()
	c.fail(c.quitErr(end), tally)
}

// quitErr is the error of a running task whose caller's ctx ended with
// end (or that the pool closed, end ErrClosed): end itself, and also
// ErrTerminated if the task was sent to a worker process, which is
// terminated for it.
func (c *call[In, Out]) quitErr(end error) error {
	if c.handover.Terminates() {
		return withCause(ErrTerminated, end)
	}
	return end
}

func (c *call[In, Out]) leave(err error, tally *atomic.Uint64) {
	if c.def.holdsIn {
		shmbuf.ReleaseAll(c.in)
	}
	c.fail(err, tally)
	c.forget()
}

// forget lets go of all the call held for the task: a caller may keep a
// Submit'ed Future long after it resolved, and it must not keep the input
// (or its encoded body, which the pool may be reusing) or the caller's ctx
// (a request's context may carry much) alive. It runs under p.mu because
// fail, the only other reader of cancel and unwatch by then, does; the
// AfterFunc has its own copy of the context.
func (c *call[In, Out]) forget() {
	var zero In
	c.in, c.payload, c.trace = zero, nil, nil
	c.ctx, c.runCtx, c.cancel, c.unwatch = nil, nil, nil, nil
}
