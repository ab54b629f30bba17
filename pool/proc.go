package pool

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/offloadgo/offload/internal/workerproc"
)

// proc is the runner of one Subprocess worker goroutine: it keeps one
// worker process, replaces it when it dies, is killed or has served
// MaxTasksPerWorker tasks, and runs one task at a time in it (see
// exchange.go). Only the worker goroutine calls its methods.
type proc struct {
	sp     *subprocess
	id     int
	stop   context.Context // ends with the pool: cuts a start short
	events events

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
	l   *live
	err error
}

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
	r.bg.Add(1)
	go func() {
		defer r.bg.Done()
		p, err := workerproc.Start(r.stop, spec)
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
func (r *proc) watch(p *workerproc.Process) *live {
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
func (r *proc) acquire(ctx context.Context) (*live, error) {
	if r.cur != nil {
		select {
		case <-r.cur.gone:
			r.events.crashed()
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
			return nil, fmt.Errorf("%w: worker %d did not start: %w", ErrWorkerCrashed, r.id, res.err)
		}
		r.cur = res.l
		return r.cur, nil
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
}

// crashWait is how long a process whose channel ended is given to be
// reaped before it is killed: a dying process is reaped in milliseconds,
// while one that sent a corrupt frame may live on.
const crashWait = 2 * time.Second

// crashed accounts for a process that died (or broke its channel): it
// waits for the reap (the process is gone already, so this is short) and
// returns the error naming how it ended.
func (r *proc) crashed(l *live) error {
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
	r.events.crashed()
	return withCause(ErrWorkerCrashed, l.proc.Exit()) // errors.As finds the *cancel.Exit
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
