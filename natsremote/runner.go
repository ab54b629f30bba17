package natsremote

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/offloadgo/offload/cancel"
	"github.com/offloadgo/offload/internal/codec"
	"github.com/offloadgo/offload/internal/transport"
	"github.com/offloadgo/offload/internal/xfer"
)

// runner runs one worker goroutine's calls, one at a time, on whichever
// nodes have room. Only the worker goroutine calls its methods.
type runner struct {
	s  *submitter
	id int
	p  pending // reused for each call, under a new ID each time
}

func (r *runner) Warm()  {}
func (r *runner) Close() {}

// Exchange sends m to a node with room, waiting for one if none has any
// (that wait counts as the task's queue wait: see m.Start), and returns
// its answer. A node that answers "full", or lacks the task, never ran
// it: the call goes to another. Once a node has taken the call it is
// never sent again: if the node goes silent the call fails with
// ErrNodeLost; if ctx ends, the node is told to cancel it and the call
// fails at once with ErrTerminated and ctx's cause.
func (r *runner) Exchange(ctx context.Context, m *transport.Call) error {
	defer r.s.bodies.Recycle(m.Payload)
	p := &r.p
	released := false
	var until time.Time // the end of the wait for a free slot QueueDelay allows
	if m.MaxWait > 0 {
		until = time.Now().Add(m.MaxWait)
	}
	for {
		if err := r.s.pick(ctx, m.Task, p, until); err != nil {
			if m.Start != nil {
				// Sent nowhere: all its time was waiting, none running.
				m.Start.Started()
			}
			if errors.Is(err, errNoRoom) {
				return fmt.Errorf("%w: %w within the %v QueueDelay left the task", transport.ErrQueueFull, err, m.MaxWait.Round(time.Microsecond))
			}
			return err
		}
		if !m.Handover.Send() {
			r.s.forget(p)
			return context.Cause(ctx) // the caller gave up, and was told: nothing is sent
		}
		if m.Start != nil {
			m.Start.Started()
		}
		putHeader(m.Payload, kindCall, p.id, deadline(ctx))
		if err := r.s.nc.PublishRequest(p.node.subject, r.s.inbox, m.Payload); err != nil {
			r.s.forget(p)
			if !m.Handover.Unsend() {
				return terminated(ctx)
			}
			return fmt.Errorf("natsremote: send task %q: %w", m.Task, err)
		}
		r.s.list(p)
		if !released && m.In != nil {
			// The input's Buffers were copied into the message: they
			// are gone from here, as a move would have taken them.
			xfer.ReleaseAll(m.In)
			released = true
		}
		select {
		case a := <-p.answer:
			if a.kind == kindFull || a.kind == kindUnknown {
				if a.kind == kindUnknown {
					r.s.refuse(p.node, m.Task, a.body)
				}
				if !m.Handover.Unsend() {
					return terminated(ctx) // and the node never ran it
				}
				continue
			}
			if !m.Handover.Reply() {
				return terminated(ctx) // the caller gave up first; the task is over anyway
			}
			return r.s.read(m, p.node.id, a)
		case <-ctx.Done():
			m.Handover.Quit()
			r.s.abandon(p, ctx)
			return terminated(ctx)
		}
	}
}

// terminated is the error of a call sent to a node, whose caller gave up.
func terminated(ctx context.Context) error {
	return cancel.WithCause(transport.ErrTerminated, context.Cause(ctx))
}

// deadline is ctx's deadline as a call carries it: Unix ns, 0 for none.
func deadline(ctx context.Context) uint64 {
	if d, ok := ctx.Deadline(); ok {
		return uint64(max(d.UnixNano(), 1))
	}
	return 0
}

// refuse records that n lacks task (or has another version of it), so
// that its calls go elsewhere: pick fails them with ErrUnknownTask once
// no live node is left that might have it.
func (s *submitter) refuse(n *node, task string, why []byte) {
	s.env.Logger.Warn("natsremote: node refused a task", "pool", s.o.Pool, "node", n.id, "task", task, "why", string(why))
	s.mu.Lock()
	if n.refused == nil {
		n.refused = map[string]bool{}
	}
	n.refused[task] = true
	s.mu.Unlock()
}

// read turns a node's final answer a into m's output or error.
func (s *submitter) read(m *transport.Call, node string, a answer) error {
	switch a.kind {
	case 0:
		return a.lost
	case kindResult:
		var err error
		if m.OutMoves {
			err = codec.PeerUnmarshal(xfer.CopyPeer, a.body, m.Out)
		} else {
			err = codec.Unmarshal(a.body, m.Out)
		}
		if err != nil {
			return fmt.Errorf("pool: decode output of task %q: %w", m.Task, err)
		}
		return nil
	case kindError:
		return &transport.TaskError{Message: string(a.body)}
	case kindPanic:
		value, stack := codec.DecodePanic(a.body)
		return &transport.Panic{Value: value, Stack: stack}
	case kindGoexit:
		return fmt.Errorf("%w: task %q did not return on node %s (t.FailNow or the like on its goroutine)", transport.ErrGoexit, m.Task, node)
	case kindTooLarge:
		return fmt.Errorf("%w: on node %s: %s", transport.ErrPayloadTooLarge, node, a.body)
	case kindCrashed:
		return fmt.Errorf("%w: on node %s: %s", transport.ErrWorkerCrashed, node, a.body)
	case kindEnded:
		var code byte
		if len(a.body) == 1 {
			code = a.body[0]
		}
		return cancel.WithCause(transport.ErrTerminated, causeOf(code))
	case kindLost:
		return fmt.Errorf("%w: node %s: %s", transport.ErrNodeLost, node, a.body)
	}
	return fmt.Errorf("natsremote: node %s sent an answer of unknown kind %d for task %q", node, a.kind, m.Task)
}
