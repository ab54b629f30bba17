package natsremote

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/offloadgo/offload/cancel"
	"github.com/offloadgo/offload/internal/blobjson"
	"github.com/offloadgo/offload/internal/codec"
	"github.com/offloadgo/offload/internal/outcome"
	"github.com/offloadgo/offload/internal/seam"
	"github.com/offloadgo/offload/internal/shmbuf"
)

// runner runs one worker goroutine's calls, one at a time, on whichever
// nodes have room. Only the worker goroutine calls its methods.
type runner struct {
	s  *submitter
	id int
	p  pending // reused for each call, under a new ID and token each time
	// at is the node the call was last sent to, while Exchange runs; nil
	// before it is sent. Where reads it from the pool's goroutines.
	at atomic.Pointer[knownNode]
	// notStarted is the latest node's account of a worker process that
	// did not start for the call, for its error if no node runs it.
	notStarted struct{ node, why string }
}

func (r *runner) Warm()  {}
func (r *runner) Close() {}

// Where says which node runs the call now ("" before it is sent): a
// knownNode's id never changes, so it is read without the submitter's
// lock.
func (r *runner) Where() (pid int, node string) {
	if n := r.at.Load(); n != nil {
		return 0, n.id
	}
	return 0, ""
}

// Exchange sends m to a node with room, waiting for one if none has any
// (that wait counts as the task's queue wait: see m.Start), and returns
// its answer. A call that no node took — NATS found nobody on the node's
// subject, or the node answered "full", "late", that it lacks the task or
// that its worker process did not start — never ran, and goes to another
// (see pick for how many of the last). Once a node has taken the call it is
// never sent again: if the node goes silent the call fails with
// ErrNodeLost; if ctx ends, the node is told to cancel it and the call
// fails at once with ErrTerminated and ctx's cause. With no live node at
// all it fails, sent nowhere, within a heartbeat of its submission, with
// an error matching ErrQueueFull.
func (r *runner) Exchange(ctx context.Context, m *seam.Call) error {
	defer r.s.bodies.Recycle(m.Payload)
	defer r.at.Store(nil)
	p := &r.p
	clear(p.fullAt)
	p.notStarted = p.notStarted[:0]
	released := false
	now := time.Now()
	nodeBy := now.Add(max(r.s.o.Heartbeat-m.Queued, 0))
	var roomBy time.Time // the end of the wait for a free slot QueueDelay allows
	if m.MaxWait > 0 {
		roomBy = now.Add(m.MaxWait)
	}
	for {
		if err := r.s.pick(ctx, m.Task, p, roomBy, nodeBy); err != nil {
			return r.unsent(m, err)
		}
		if sent, err := r.send(ctx, m, p); !sent {
			return err
		}
		if !released && m.In != nil {
			// The input's Buffers were copied into the message: they
			// are gone from here, as a move would have taken them.
			shmbuf.ReleaseAll(m.In)
			released = true
		}
		if answered, err := r.await(ctx, m, p); answered {
			return err
		}
	}
}

// send publishes m to p's node, the one pick chose, once m's hand-over
// says the caller has not given up. sent false means Exchange returns
// err: the caller had given up, or the publish failed.
func (r *runner) send(ctx context.Context, m *seam.Call, p *pending) (sent bool, err error) {
	if !m.Handover.Send() {
		r.s.forget(p)
		return false, context.Cause(ctx) // the caller gave up, and was told: nothing is sent
	}
	if m.Start != nil {
		m.Start.Started()
	}
	r.at.Store(p.node)
	kind := kindCall
	if m.JSON {
		kind = kindProgramCall
	}
	stamp(m.Payload, header{kind: kind, id: p.id, arg: deadline(m.Deadline), token: p.token}, p.startBy)
	if err := r.s.nc.PublishRequest(p.node.subject, r.s.replyToCall(p), m.Payload); err != nil {
		r.s.forget(p)
		if !m.Handover.Unsend() {
			return false, terminated(ctx)
		}
		return false, fmt.Errorf("natsremote: send task %q: %w", m.Task, err)
	}
	r.s.list(p)
	return true, nil
}

// await waits for the answer to p, sent, or for ctx to end. answered
// false means the node did not take the call (full, late, lacking the
// task, its worker process not started, or nobody listening) and Exchange
// sends it to another; otherwise Exchange returns err.
func (r *runner) await(ctx context.Context, m *seam.Call, p *pending) (answered bool, err error) {
	select {
	case a := <-p.answer:
		if a.undelivered || a.kind == kindFull || a.kind == kindUnknown || a.kind == kindLate || a.kind == kindNotStarted {
			switch a.kind {
			case kindUnknown:
				r.s.refuse(p.node, m.Task, a.body)
			case kindNotStarted:
				r.notStarted.node, r.notStarted.why = p.node.id, string(a.body)
			}
			if !m.Handover.Unsend() {
				return true, terminated(ctx) // and the node never ran it
			}
			return false, nil
		}
		if a.kind == kindEnded {
			// The task's ctx ended on the node: it was terminated
			// there. The hand-over stays "sent", so that a caller
			// whose ctx ends now too hears ErrTerminated, not the
			// plain ctx error of a call that never ran.
			return true, r.s.read(m, p.node.id, a)
		}
		if !m.Handover.Reply() {
			return true, terminated(ctx) // the caller gave up first; the task is over anyway
		}
		return true, r.s.read(m, p.node.id, a)
	case <-ctx.Done():
		m.Handover.Quit()
		r.s.abandon(p, ctx)
		return true, terminated(ctx)
	}
}

// unsent is Exchange's error for a call pick sent nowhere: all its time
// was waiting, none running.
func (r *runner) unsent(m *seam.Call, err error) error {
	if m.Start != nil {
		m.Start.Started()
	}
	switch {
	case errors.Is(err, errNoRoom):
		return fmt.Errorf("%w: %w within %v, what QueueDelay allowed this task", seam.ErrQueueFull, err, m.MaxWait.Round(time.Millisecond))
	case errors.Is(err, errNoNode):
		return fmt.Errorf("%w: %w (none answered within a heartbeat, %v)", seam.ErrQueueFull, err, r.s.o.Heartbeat)
	case errors.Is(err, errNotStarted):
		// Nothing ran anywhere: the caller may try again, as for a
		// Subprocess pool's worker that did not start.
		where := "node " + r.notStarted.node
		if tries := len(r.p.notStarted); tries > 1 {
			where = fmt.Sprintf("%d nodes, the last %s", tries, where)
		}
		return fmt.Errorf("%w: on %s: %s", seam.ErrWorkerStartFailed, where, r.notStarted.why)
	}
	return err
}

// terminated is the error of a call sent to a node, whose caller gave up.
func terminated(ctx context.Context) error {
	return cancel.WithCause(seam.ErrTerminated, context.Cause(ctx))
}

// deadline is a call's deadline as it travels: Unix ns, 0 for none.
func deadline(d time.Time) uint64 {
	if d.IsZero() {
		return 0
	}
	return uint64(max(d.UnixNano(), 1))
}

// refuse records that n lacks task (or has another version of it), so
// that its calls go elsewhere: pick fails them with ErrUnknownTask once
// no live node is left that might have it.
func (s *submitter) refuse(n *knownNode, task string, why []byte) {
	s.mu.Lock()
	if n.refused == nil {
		n.refused = map[string]bool{}
	}
	n.refused[task] = true
	id := n.id
	s.post(func() {
		s.env.Logger.Warn("natsremote: node refused a task", "pool", s.o.Pool, "node", id, "task", task, "why", string(why))
	})
	s.mu.Unlock()
}

// read turns a node's final answer a into m's output or error.
func (s *submitter) read(m *seam.Call, node string, a answer) error {
	if a.kind == 0 {
		return a.lost
	}
	k := outcomeOf(a.kind)
	switch k {
	case 0:
		return fmt.Errorf("natsremote: node %s sent an answer of unknown kind %d for task %q", node, a.kind, m.Task)
	case outcome.Result:
		if m.JSON {
			return decodeProgramOutput(m, a.body)
		}
		var err error
		if m.OutMoves {
			err = codec.PeerUnmarshal(shmbuf.CopyPeer{}, a.body, m.Out)
		} else {
			err = codec.Unmarshal(a.body, m.Out)
		}
		if err != nil {
			return fmt.Errorf("pool: decode output of task %q: %w", m.Task, err)
		}
		return nil
	}
	return outcome.Of(k, a.body).Err(outcome.Where{Task: m.Task, Node: node, Cause: causeOf})
}

// decodeProgramOutput decodes a program's output, a program value, into
// m.Out: its blob is body's bytes, not a copy.
func decodeProgramOutput(m *seam.Call, body []byte) error {
	v, err := parseProgramValue(body)
	if err == nil {
		err = blobjson.Unmarshal(v.JSON, v.Field, v.Blob, m.Out)
	}
	if err != nil {
		return fmt.Errorf("pool: decode output of task %q from JSON: %w", m.Task, err)
	}
	return nil
}
