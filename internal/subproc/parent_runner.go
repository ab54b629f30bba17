package subproc

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/offloadgo/offload/cancel"
	"github.com/offloadgo/offload/internal/seam"
	"github.com/offloadgo/offload/internal/shmbuf"
	"github.com/offloadgo/offload/internal/workerproc"
)

// runner runs the calls of one Subprocess worker goroutine: it keeps one
// worker process, replaces it when it dies, is killed or has served
// MaxTasksPerWorker tasks, and runs one task at a time in it (see
// parent_exchange.go). Only the worker goroutine calls its methods.
type runner struct {
	sp     *ProcessCarrier
	id     int
	stop   context.Context // ends with the pool: cuts a start short
	events seam.Events

	cur     *child           // the process tasks go to; nil until started
	pending chan startResult // a start in progress, or nil
	seq     uint64           // the last call's frame ID
	next    seam.EventKind   // why the next start replaces a process (0: none)

	// bg tracks the goroutines a process leaves behind (its reader, a
	// background close or kill), so that close can wait for them all.
	bg sync.WaitGroup
	// renewal holds a process Renew started, until the worker goroutine
	// takes it (see parent_renew.go).
	renewal renewal

	// pid is the process a call is sent to, while it runs there; 0
	// otherwise. Where reads it from the pool's goroutines.
	pid atomic.Int64
}

// Where says which process runs the call now (0 for none).
func (r *runner) Where() (pid int, node string) { return int(r.pid.Load()), "" }

// child is one started worker process. Without a TerminateGrace the
// worker goroutine reads the replies itself (see await); with one, a
// reader goroutine does, so that the worker goroutine can wait for the
// reply, the process's end and the caller's ctx at once, and then for a
// cancelled task's reply within its grace (see stopTask).
type child struct {
	proc   *workerproc.Process
	pid    int
	tasks  map[string]struct{}   // from its hello
	frames chan workerproc.Frame // replies, from the reader; nil without one
	gone   <-chan struct{}       // closed when the reader stops, or at the reap without a reader: the process is dying
	served int
	// link moves Buffers to and from the process. Its Peer is closed by
	// end, after the reap: a live worker could still write into the
	// memory that closing frees.
	link *peerLink
}

type startResult struct {
	l   *child
	err error
}

// Warm starts the first process. One refused by the backoff is not
// started: the first call gets the refusal.
func (r *runner) Warm() { _ = r.launch() }

// launch starts a process in the background, unless one is starting, or
// returns the error of a start the backoff refuses (see startBackoff). The
// start is bounded by the pool's stop context, so that Close cuts it short.
func (r *runner) launch() error {
	if r.pending != nil {
		return nil
	}
	ticket, err := r.sp.starts.claim()
	if err != nil {
		return err
	}
	ch := make(chan startResult, 1)
	r.pending = ch
	replacing := r.next
	r.next = 0
	r.bg.Add(1)
	go func() {
		defer r.bg.Done()
		p, err := r.start(r.stop, replacing)
		r.sp.starts.settle(ticket, err, r.stop.Err() != nil)
		if err != nil {
			ch <- startResult{err: err}
			return
		}
		ch <- startResult{l: r.watch(p)}
	}()
	return nil
}

// start starts a process for this runner, bounded by ctx, and reports it:
// Started (replacing says why the process it replaces ended), or
// StartFailed unless ctx cut it short. It reads only what never changes,
// so that Renew can call it from another goroutine.
func (r *runner) start(ctx context.Context, replacing seam.EventKind) (*workerproc.Process, error) {
	spec := r.sp.spec
	spec.ID = r.id
	begin := time.Now()
	p, err := workerproc.Start(ctx, spec)
	if err == nil && r.sp.program && r.sp.nice > 0 {
		// No Main of ours runs in a program to lower its own priority.
		if err = raiseNiceOf(p.PID(), r.sp.nice); err != nil {
			p.Kill()
			p.Close()
			err = fmt.Errorf("pool: lower the priority of worker %d (pid %d) by %d: %w", r.id, p.PID(), r.sp.nice, err)
		}
	}
	if err != nil {
		if ctx.Err() == nil { // not cut short by the pool's end (or Renew's caller)
			r.events.Event(seam.Event{Kind: seam.StartFailed, Worker: r.id, Err: err})
		}
		return nil, err
	}
	r.events.Event(seam.Event{Kind: seam.Started, Worker: r.id, PID: p.PID(), Took: time.Since(begin), Replacing: replacing})
	return p, nil
}

// watch makes p a child and, with a TerminateGrace, starts its reader
// goroutine, which hands replies to the worker goroutine and closes gone
// when the channel ends.
func (r *runner) watch(p *workerproc.Process) *child {
	l := &child{
		proc:  p,
		pid:   p.PID(),
		tasks: make(map[string]struct{}, len(p.Hello().Tasks)),
		gone:  p.Done(),
	}
	if !r.sp.program { // a program moves no Buffers
		l.link = newPeerLink(p.Conn().MaxFrame(), shmbuf.ParentSide)
	}
	for _, name := range p.Hello().Tasks {
		l.tasks[name] = struct{}{}
	}
	if r.sp.program {
		r.sp.heard(l.tasks) // l.tasks is never written again
	}
	if r.sp.grace == 0 {
		return l
	}
	gone := make(chan struct{})
	l.frames, l.gone = make(chan workerproc.Frame, 1), gone
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

// acquire returns a live process, starting one if needed, or ctx's cause
// if ctx ends first (the start goes on, for the next task). A process
// that died while idle is replaced: its end is nobody's task's fault.
func (r *runner) acquire(ctx context.Context) (*child, error) {
	if r.renewal.ready.Load() { // one atomic load on a call's path
		r.Refresh() // a process Renew started replaces the current one now
	}
	if r.cur != nil {
		select {
		case <-r.cur.gone:
			r.bury(r.cur) // its death costs no task: the call goes to a new one
		default:
			return r.cur, nil
		}
	}
	if err := r.launch(); err != nil {
		return nil, err // at once: the backoff after failed starts
	}
	select {
	case res := <-r.pending:
		r.pending = nil
		if res.err != nil {
			return nil, r.sp.startFailed(res.err)
		}
		r.cur = res.l
		return r.cur, nil
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
}

// startFailed is the error of a call whose worker process did not come
// up (err says how). A worker that died or kept silent before its
// handshake is most often a binary whose main does other work before
// pool.Main (a server that exits because its port is taken, or serves):
// the error says so, since the process's own output is only in the log.
func (sp *ProcessCarrier) startFailed(err error) error {
	if sp.program {
		return fmt.Errorf("%w: %q: %w", seam.ErrWorkerStartFailed, sp.command, err)
	}
	var exit *cancel.Exit
	if errors.Is(err, workerproc.ErrStartTimeout) || errors.As(err, &exit) {
		return fmt.Errorf("%w: %w; did the binary call pool.Main() first in main (and in TestMain)?", seam.ErrWorkerStartFailed, err)
	}
	return fmt.Errorf("%w: %w", seam.ErrWorkerStartFailed, err)
}

// crashWait is how long a process whose channel ended is given to be
// reaped before it is killed: a dying process is reaped in milliseconds,
// while one that sent a corrupt frame may live on.
const crashWait = 2 * time.Second

// crashed accounts for a process that died (or broke its channel) and
// returns the error naming how it ended (see bury).
func (r *runner) crashed(l *child) error {
	return cancel.WithCause(seam.ErrWorkerCrashed, r.bury(l)) // errors.As finds the *cancel.Exit
}

// bury ends a process that died on its own: it waits for the reap (the
// process is gone already, so this is short), reports the crash with the
// exit account and returns that account.
func (r *runner) bury(l *child) *cancel.Exit {
	select {
	case <-l.proc.Done():
	case <-time.After(crashWait):
		l.proc.Kill() // alive but its channel is broken: of no more use
		<-l.proc.Done()
	}
	l.end()
	if r.cur == l {
		r.cur = nil
	}
	r.next = seam.Crashed
	r.note(seam.Crashed, l)
	return l.proc.Exit()
}

// recycle retires l once it has served MaxTasksPerWorker tasks.
func (r *runner) recycle(l *child) {
	if r.sp.maxTasks > 0 && l.served >= r.sp.maxTasks {
		r.retire(l, seam.Recycled)
	}
}

// note reports an event about child l to the pool; a crash's with its
// exit account, so only once l is reaped.
func (r *runner) note(kind seam.EventKind, l *child) {
	ev := seam.Event{Kind: kind, Worker: r.id, PID: l.pid}
	if kind == seam.Crashed {
		ev.Exit = l.proc.Exit()
	}
	r.events.Event(ev)
}

// retire takes l out of service for the reason why (Recycled,
// Terminated, Retired), reported at once, and starts its successor.
func (r *runner) retire(l *child, why seam.EventKind) {
	r.withdraw(l, why)
	r.next = why
	_ = r.launch() // refused: the next call starts the successor, or is refused
}

// withdraw is retire without the successor, for a caller that has one
// already (see Refresh).
func (r *runner) withdraw(l *child, why seam.EventKind) {
	if r.cur == l {
		r.cur = nil
	}
	r.note(why, l)
	r.retireInBackground(l)
}

// retireInBackground ends l without making the worker goroutine wait.
func (r *runner) retireInBackground(l *child) {
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
func (l *child) end() {
	l.proc.Close()
	<-l.gone
	for {
		select {
		case f := <-l.frames:
			closeFDs(f.FDs)
		default:
			if l.link != nil {
				l.link.close()
			}
			return
		}
	}
}

// close ends the process, and one that was starting, and waits until
// every process of this runner is reaped and every goroutine has exited.
func (r *runner) Close() {
	r.renewal.close()
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
