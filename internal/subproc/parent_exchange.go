package subproc

import (
	"context"
	"fmt"

	"github.com/offloadgo/offload/cancel"
	"github.com/offloadgo/offload/internal/outcome"
	"github.com/offloadgo/offload/internal/seam"
	"github.com/offloadgo/offload/internal/shmbuf"

	"github.com/offloadgo/offload/internal/workerproc"
)

// maxSends bounds how many processes one call is sent to when each dies
// before it takes the call: a binary whose workers keep dying fails the
// call rather than loop.
const maxSends = 3

func (r *runner) Exchange(ctx context.Context, m *seam.Call) error {
	if m.Payload != nil {
		// Written or not, the body is not read again once the exchange is
		// over: it goes back for reuse then, not after the first write, in
		// case the call must go to another process.
		defer r.sp.bodies.Recycle(m.Payload)
	}
	for sends := 1; ; sends++ {
		l, err := r.acquire(ctx)
		if err != nil {
			return err
		}
		if _, ok := l.tasks[m.Task]; !ok {
			return r.unknownTask(l, m.Task)
		}
		if !m.Handover.Send() {
			return context.Cause(ctx) // the caller gave up, and was told: nothing is sent
		}
		r.pid.Store(int64(l.pid))
		in, err, taken := r.attempt(ctx, l, m)
		r.pid.Store(0)
		if taken || sends == maxSends || !m.Handover.Unsend() {
			return err
		}
		if in != nil {
			m.In = in // the Buffers taken back from the dead process
		}
	}
}

// attempt sends m to l and waits for the reply. taken says whether the
// process took the call: false only when it died before it read the call
// whole, which costs the call nothing; in is then m's input taken back,
// if it moved Buffers to l.
func (r *runner) attempt(ctx context.Context, l *child, m *seam.Call) (in any, err error, taken bool) {
	r.seq++
	id := r.seq
	f, input, err := r.callFrame(l, id, m)
	if err != nil {
		return nil, err, true // nothing was sent: the call's own failure
	}
	if err := l.proc.Conn().WriteFrame(f); err != nil {
		return r.died(l, m, input, false)
	}
	l.served++
	if l.frames == nil {
		return r.await(ctx, l, m, id, input)
	}
	for {
		select {
		case f := <-l.frames:
			if f.ID != id {
				closeFDs(f.FDs)
				continue // a late reply to an earlier call; not expected, harmless
			}
			return nil, r.receive(l, m, f, false), true
		case <-l.gone:
			select {
			case f := <-l.frames: // the reply came just before the end
				if f.ID == id {
					return nil, r.receive(l, m, f, true), true
				}
				closeFDs(f.FDs)
			default:
			}
			return r.died(l, m, input, true)
		case <-ctx.Done():
			m.Handover.Quit()
			r.stopTask(ctx, l, m, id)
			return nil, cancel.WithCause(seam.ErrTerminated, context.Cause(ctx)), true
		}
	}
}

// callFrame builds the frame that sends m to l: the payload encoded
// before admission, or the input encoded now with l's Peer, plus the
// segments and releases due to l. input is the input's encoding, for
// died to take moved Buffers back. If Buffers moved for a frame that
// can't be sent, l is retired: closing its Peer after the reap frees them.
func (r *runner) callFrame(l *child, id uint64, m *seam.Call) (f workerproc.Frame, input []byte, err error) {
	f = workerproc.Frame{Kind: kindCall, ID: id, Body: m.Payload}
	if r.sp.program {
		return f, nil, nil // progCall: the payload is the whole body
	}
	var segs []shmbuf.Segment
	if m.Payload == nil {
		body, s, committed, err := r.sp.encodeMoving(l.link.peer, m.Task, m.Trace, m.In)
		if err != nil {
			if committed {
				r.retire(l, seam.Retired)
			}
			return f, nil, err
		}
		f.Body, segs = body, s
		_, _, input, _ = parseCall(body)
	}
	if err := l.link.seal(&f, segs, false, m.Payload == nil); err != nil {
		r.retire(l, seam.Retired)
		return f, nil, fmt.Errorf("pool: input of task %q: %w", m.Task, err)
	}
	return f, input, nil
}

// died accounts for l, which ended under m: if l read m's frame whole it
// took the call, which fails with ErrWorkerCrashed; if not (the frame was
// not written whole, or bytes of it are still in the pipe), the call is
// free to go to another process, with the Buffers it lent to l taken back
// first (l's Peer would free them once l is reaped).
func (r *runner) died(l *child, m *seam.Call, input []byte, written bool) (in any, err error, taken bool) {
	if written {
		unread, uerr := l.proc.Conn().Unread()
		taken = uerr != nil || unread == 0
	}
	if !taken && input != nil {
		if in, err = m.Retake.Retake(l.link.peer, input); err != nil {
			taken = true // its Buffers are lost with l: the call can't go again
		}
	}
	return in, r.crashed(l), taken
}

// receive reads l's reply f to m: its moves first, then the output, then
// l is recycled or, if it died or broke the Buffer books, retired. A task
// whose caller gave up first (and was told ErrTerminated) returned all
// the same: its process serves on, and the pool drops the output, whose
// Buffers it frees.
func (r *runner) receive(l *child, m *seam.Call, f workerproc.Frame, dying bool) error {
	if r.sp.program {
		return r.receiveProgram(l, m, f, dying)
	}
	m.Handover.Reply()
	kind, body, broken, err := l.link.open(f)
	if err != nil {
		err = fmt.Errorf("pool: worker %d (pid %d) sent a bad reply to task %q: %w", r.id, l.pid, m.Task, err)
	} else if body, err = reply(m.Task, kind, body); err == nil {
		var peer shmbuf.Peer
		if m.OutMoves {
			peer = l.link.peer
		}
		if err = r.sp.decode(m.Task, body, m.Out, peer); err != nil && peer != nil {
			// References past the failure were never read: the worker
			// would keep them lent. Retiring it frees them.
			broken = true
		}
	}
	switch {
	case dying:
		r.bury(l) // it replied, then died: its end is no task's fault
	case broken:
		r.retire(l, seam.Retired)
	default:
		r.recycle(l)
	}
	return err
}

// await reads the reply to call id on the worker goroutine, which spares
// the round trip the hand-off from a reader goroutine. Without a grace,
// an ended ctx needs no reader anyway: the process is killed at once, as
// stopTask's would be with a grace of 0 (by a context.AfterFunc, which
// also closes the channel so that the read ends at once). The caller has
// its ErrTerminated from the pool already.
func (r *runner) await(ctx context.Context, l *child, m *seam.Call, id uint64, input []byte) (in any, err error, taken bool) {
	stop := context.AfterFunc(ctx, func() {
		l.proc.Terminate(0, func() { r.askStop(l, id, ctx) })
		// Unblock the read now rather than when the process is gone: the
		// kernel takes tens of milliseconds to tear down a big heap, and
		// the worker goroutine should be starting the replacement.
		_ = l.proc.Conn().Close()
	})
	var f workerproc.Frame
	for {
		f, err = l.proc.Conn().ReadFrame()
		if err != nil || f.ID == id {
			break
		}
		closeFDs(f.FDs) // a late reply to an earlier call; not expected, harmless
	}
	if !stop() { // ctx ended: the process is killed, even if it replied
		if err == nil {
			closeFDs(f.FDs)
		}
		m.Handover.Quit()
		r.retire(l, seam.Terminated)
		return nil, cancel.WithCause(seam.ErrTerminated, context.Cause(ctx)), true
	}
	if err != nil {
		return r.died(l, m, input, true)
	}
	return nil, r.receive(l, m, f, false), true
}

// reply turns a worker's answer (its moves taken off) into the task's
// output or error.
func reply(task string, kind byte, body []byte) ([]byte, error) {
	k := outcomeOf(kind)
	switch k {
	case 0:
		return nil, fmt.Errorf("pool: worker sent a frame of unknown kind %d for task %q", kind, task)
	case outcome.Result:
		return body, nil
	}
	return nil, outcome.Of(k, body).Err(outcome.Where{Task: task})
}

// unknownTask is the error of a call to task, which l did not name in
// its hello.
func (r *runner) unknownTask(l *child, task string) error {
	if r.sp.program {
		return fmt.Errorf("%w: %q is not among the %d tasks that %q serves (worker %d, pid %d)",
			seam.ErrUnknownTask, task, len(l.tasks), r.sp.command, r.id, l.pid)
	}
	return fmt.Errorf("%w: %q is not registered in worker process %d (pid %d); "+
		"register tasks at package level (a var or init) so that the re-executed binary has them too",
		seam.ErrUnknownTask, task, r.id, l.pid)
}
