package pool

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"sync"
	"time"

	"github.com/offloadgo/offload/cancel"
	"github.com/offloadgo/offload/transfer"
)

// proc is the runner of one Subprocess worker goroutine: it keeps one
// worker process, replaces it when it dies, is killed or has served
// MaxTasksPerWorker tasks, and runs one task at a time in it. Only the
// worker goroutine calls its methods.
type proc struct {
	sp *subprocess
	id int

	cur     *live            // the process tasks go to; nil until started
	pending chan startResult // a start in progress, or nil
	seq     uint64           // the last call's frame ID

	// bg tracks the goroutines a process leaves behind (its reader, a
	// background close or kill), so that close can wait for them all.
	bg sync.WaitGroup
}

// live is one started worker process. Without a TerminateGrace the
// worker goroutine reads the replies itself (see await); with one, a
// reader goroutine does, so that the worker goroutine can leave a
// terminated task's process to its grace without waiting.
type live struct {
	proc   *cancel.Process
	pid    int
	tasks  map[string]struct{} // from its hello
	frames chan cancel.Frame   // replies, from the reader; nil without one
	gone   <-chan struct{}     // closed when the reader stops, or at the reap without a reader: the process is dying
	served int
	// link moves Buffers to and from the process. Its Peer is closed by
	// end, after the reap: a live worker could still write into the
	// memory that closing frees.
	link *peerLink
}

type startResult struct {
	l   *live
	err error
}

func newProc(sp *subprocess, id int) *proc { return &proc{sp: sp, id: id} }

func (r *proc) warm() { r.launch() }

// launch starts a process in the background, unless one is starting. The
// start is bounded by the pool's stop context, so that Close cuts it short.
func (r *proc) launch() {
	if r.pending != nil {
		return
	}
	ch := make(chan startResult, 1)
	r.pending = ch
	spec := r.sp.spec
	spec.ID = r.id
	stop := r.sp.pool.stop
	r.bg.Add(1)
	go func() {
		defer r.bg.Done()
		p, err := cancel.Start(stop, spec)
		if err != nil {
			ch <- startResult{err: err}
			return
		}
		ch <- startResult{l: r.watch(p)}
	}()
}

// watch makes p's live and, with a TerminateGrace, starts its reader
// goroutine, which hands replies to the worker goroutine and closes gone
// when the channel ends.
func (r *proc) watch(p *cancel.Process) *live {
	l := &live{
		proc:  p,
		pid:   p.PID(),
		tasks: make(map[string]struct{}, len(p.Hello().Tasks)),
		gone:  p.Done(),
		link:  newPeerLink(p.Conn().MaxFrame()),
	}
	for _, name := range p.Hello().Tasks {
		l.tasks[name] = struct{}{}
	}
	if r.sp.grace == 0 {
		return l
	}
	gone := make(chan struct{})
	l.frames, l.gone = make(chan cancel.Frame, 1), gone
	r.bg.Add(1)
	go func() {
		defer r.bg.Done()
		defer close(gone)
		for {
			f, err := p.Conn().ReadFrame()
			if err != nil {
				return
			}
			select {
			case l.frames <- f: // its descriptors are the worker goroutine's now
			case <-p.Done():
				closeFDs(f.FDs)
				return
			}
			// Let the worker goroutine run on this thread's P now, before
			// this goroutine blocks in its next read: a goroutine made
			// ready just before a blocking system call waits for another
			// thread to steal it, or for the P to be retaken.
			runtime.Gosched()
		}
	}()
	return l
}

// acquire returns a live process, starting one if needed, or ctx's end.
func (r *proc) acquire(ctx context.Context) (*live, error) {
	if r.cur != nil {
		select {
		case <-r.cur.gone: // died while idle: its end is nobody's task's fault
			r.retireInBackground(r.cur)
			r.cur = nil
		default:
			return r.cur, nil
		}
	}
	r.launch()
	select {
	case res := <-r.pending:
		r.pending = nil
		if res.err != nil {
			return nil, fmt.Errorf("%w: worker %d did not start: %v", ErrWorkerCrashed, r.id, res.err)
		}
		r.cur = res.l
		return r.cur, nil
	case <-ctx.Done():
		return nil, withCause(ErrTerminated, context.Cause(ctx)) // the start goes on, for the next task
	}
}

func (r *proc) exchange(ctx context.Context, m message) error {
	l, err := r.acquire(ctx)
	if err != nil {
		return err
	}
	if _, ok := l.tasks[m.task]; !ok {
		return fmt.Errorf("%w: %q is not registered in worker process %d (pid %d); "+
			"register tasks at package level (a var or init) so that the re-executed binary has them too",
			ErrUnknownTask, m.task, r.id, l.pid)
	}
	r.seq++
	id := r.seq
	f, err := r.callFrame(l, id, m)
	if err != nil {
		return err
	}
	if err := l.proc.Conn().WriteFrame(f); err != nil {
		return r.crashed(l)
	}
	r.sp.bodies.recycle(f.Body) // written: the call's payload is not read again
	l.served++
	if l.frames == nil {
		return r.await(ctx, l, m, id)
	}
	for {
		select {
		case f := <-l.frames:
			if f.ID != id {
				closeFDs(f.FDs)
				continue // a late reply to an earlier call; not expected, harmless
			}
			return r.receive(l, m, f, false)
		case <-l.gone:
			select {
			case f := <-l.frames: // the reply came just before the end
				if f.ID == id {
					return r.receive(l, m, f, true)
				}
				closeFDs(f.FDs)
			default:
			}
			return r.crashed(l)
		case <-ctx.Done():
			r.terminate(l, id)
			return withCause(ErrTerminated, context.Cause(ctx))
		}
	}
}

// callFrame builds the frame that sends m to l: the payload encoded
// before admission, or the input encoded now with l's Peer, plus the
// segments and releases due to l. If Buffers moved for a frame that can't
// be sent, l is retired: closing its Peer after the reap frees them.
func (r *proc) callFrame(l *live, id uint64, m message) (cancel.Frame, error) {
	f := cancel.Frame{Kind: kindCall, ID: id, Body: m.payload}
	var segs []transfer.Segment
	if m.payload == nil {
		body, s, committed, err := r.sp.encodeMoving(l.link.peer, m.task, m.in)
		if err != nil {
			if committed {
				r.retire(l)
			}
			return f, err
		}
		f.Body, segs = body, s
	}
	if err := l.link.seal(&f, segs, false, m.payload == nil); err != nil {
		r.retire(l)
		return f, fmt.Errorf("pool: input of task %q: %w", m.task, err)
	}
	return f, nil
}

// receive reads l's reply f to m: its moves first, then the output, then
// l is recycled or, if it died or broke the Buffer books, retired.
func (r *proc) receive(l *live, m message, f cancel.Frame, dying bool) error {
	kind, body, broken, err := l.link.open(f)
	if err != nil {
		err = fmt.Errorf("pool: worker %d (pid %d) sent a bad reply to task %q: %w", r.id, l.pid, m.task, err)
	} else if body, err = reply(m.task, kind, body); err == nil {
		var peer *transfer.Peer
		if m.outMoves {
			peer = l.link.peer
		}
		if err = r.sp.decode(m.task, body, m.out, peer); err != nil && peer != nil {
			// References past the failure were never read: the worker
			// would keep them lent. Retiring it frees them.
			broken = true
		}
	}
	switch {
	case dying || broken:
		r.retire(l)
	default:
		r.recycle(l)
	}
	return err
}

// await reads the reply to call id on the worker goroutine, which spares
// the round trip the hand-off from a reader goroutine. Without a grace,
// an ended ctx needs no reader anyway: the process is killed at once (by
// a context.AfterFunc, as terminate would, which also closes the channel
// so that the read ends at once). The caller has its ErrTerminated from the pool already.
func (r *proc) await(ctx context.Context, l *live, m message, id uint64) error {
	stop := context.AfterFunc(ctx, func() {
		l.proc.Terminate(0, func() {
			_ = l.proc.Conn().WriteFrame(cancel.Frame{Kind: kindCancel, ID: id})
		})
		// Unblock the read now rather than when the process is gone: the
		// kernel takes tens of milliseconds to tear down a big heap, and
		// the worker goroutine should be starting the replacement.
		_ = l.proc.Conn().Close()
	})
	var f cancel.Frame
	var err error
	for {
		f, err = l.proc.Conn().ReadFrame()
		if err != nil {
			break
		}
		if f.ID == id {
			break
		}
		closeFDs(f.FDs) // a late reply to an earlier call; not expected, harmless
	}
	if !stop() { // ctx ended: the process is killed, even if it replied
		if err == nil {
			closeFDs(f.FDs)
		}
		r.sp.pool.stats.terminated.Add(1)
		r.retire(l)
		return withCause(ErrTerminated, context.Cause(ctx))
	}
	if err != nil {
		return r.crashed(l)
	}
	return r.receive(l, m, f, false)
}

// crashWait is how long a process whose channel ended is given to be
// reaped before it is killed: a dying process is reaped in milliseconds,
// while one that sent a corrupt frame may live on.
const crashWait = 2 * time.Second

// closeFDs closes descriptors that came with a frame.
func closeFDs(fds []int) {
	for _, fd := range fds {
		os.NewFile(uintptr(fd), "").Close()
	}
}

// reply turns a worker's answer (its moves taken off) into the task's
// output or error.
func reply(task string, kind byte, body []byte) ([]byte, error) {
	switch kind {
	case kindResult:
		return body, nil
	case kindError:
		return nil, &RemoteError{Task: task, Message: string(body)}
	case kindPanic:
		value, stack := parsePanic(body)
		return nil, &PanicError{Task: task, Value: value, Stack: stack}
	case kindTooLarge:
		return nil, fmt.Errorf("%w: %s", ErrPayloadTooLarge, body)
	case kindUnknown:
		return nil, fmt.Errorf("%w: %s", ErrUnknownTask, body)
	}
	return nil, fmt.Errorf("pool: worker sent a frame of unknown kind %d for task %q", kind, task)
}

// crashed accounts for a process that died under a task: it waits for the
// reap (the process is gone already, so this is short) and returns the
// error naming how it ended.
func (r *proc) crashed(l *live) error {
	select {
	case <-l.proc.Done():
	case <-time.After(crashWait):
		l.proc.Kill() // alive but its channel is broken: of no more use
		<-l.proc.Done()
	}
	l.end()
	r.cur = nil
	r.sp.pool.stats.crashed.Add(1)
	return fmt.Errorf("%w: %v", ErrWorkerCrashed, l.proc.Exit())
}

// terminate stops the task with frame ID id whose caller gave up: the
// worker is asked to cancel its ctx and killed after TerminateGrace. The
// process is not reused, even if it returns in time; the caller does not
// wait for the kill or the reap, which happen in the background while a
// replacement starts.
func (r *proc) terminate(l *live, id uint64) {
	r.sp.pool.stats.terminated.Add(1)
	r.cur = nil
	grace := time.Duration(r.sp.grace)
	stop := l.proc.Terminate(grace, func() {
		_ = l.proc.Conn().WriteFrame(cancel.Frame{Kind: kindCancel, ID: id})
	})
	r.bg.Add(1)
	go func() {
		defer r.bg.Done()
		if grace > 0 {
			// The worker may finish within its grace; then it need not be
			// killed, and closing its channel lets it exit by itself.
			select {
			case f := <-l.frames:
				closeFDs(f.FDs)
				stop()
			case <-l.gone:
			}
		}
		l.end()
	}()
	r.launch()
}

// recycle retires l once it has served MaxTasksPerWorker tasks.
func (r *proc) recycle(l *live) {
	if r.sp.maxTasks > 0 && l.served >= r.sp.maxTasks {
		r.retire(l)
	}
}

// retire takes l out of service and starts its successor at once.
func (r *proc) retire(l *live) {
	if r.cur == l {
		r.cur = nil
	}
	r.retireInBackground(l)
	r.launch()
}

// retireInBackground ends l without making the worker goroutine wait.
func (r *proc) retireInBackground(l *live) {
	r.bg.Add(1)
	go func() {
		defer r.bg.Done()
		l.end()
	}()
}

// end closes l's process and, once it is reaped and its reader has
// stopped, the descriptors of replies nobody read and l's Peer: the
// Buffers the process held are freed, its segments unmapped. Every path
// that drops a process comes here.
func (l *live) end() {
	l.proc.Close()
	<-l.gone
	for {
		select {
		case f := <-l.frames:
			closeFDs(f.FDs)
		default:
			l.link.close()
			return
		}
	}
}

// close ends the process, and one that was starting, and waits until
// every process of this runner is reaped and every goroutine has exited.
func (r *proc) close() {
	if r.pending != nil {
		if res := <-r.pending; res.l != nil {
			res.l.end()
		}
		r.pending = nil
	}
	if r.cur != nil {
		r.cur.end()
		r.cur = nil
	}
	r.bg.Wait()
}
