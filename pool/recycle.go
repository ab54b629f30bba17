package pool

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/offloadgo/offload/internal/seam"
)

// RecycleWorkers replaces every worker process of a Subprocess pool with a
// new one: the way to put a new worker binary in service (deploy it at the
// path the workers run, then call RecycleWorkers) without dropping a call
// or capacity. One worker at a time, it starts a new process and waits for
// its hello; then the old process is retired (a WorkerRecycled event;
// Stats.Recycled counts it): at once if its worker is idle, else as soon
// as its current task returns. No task is interrupted, and no task waits
// for a start: the new process is up before the old one leaves. An old
// process with a long task in flight stays for it, so for a while a pool
// of n workers runs up to 2n processes.
//
// RecycleWorkers blocks until every worker that served when it was called
// has its new process in service (a worker that exits meanwhile, by
// SetWorkers or IdleTimeout, has nothing left to replace), and returns nil.
// Workers that start meanwhile run the binary as it is then, so they are
// new already. It changes no setting: Workers, MinWorkers, IdleTimeout and
// MaxTasksPerWorker apply as before, a new process counting its tasks from
// 0 and an idle worker keeping its idle time.
//
// If a new process does not start or say hello within StartTimeout,
// RecycleWorkers stops there and returns an error matching
// ErrWorkerStartFailed (the start's account, as a task's would be): the
// workers not reached keep their old processes and serve on, and those
// already handed a new process put it in service after their current task.
// If ctx ends first, it returns an error matching ctx's error, which
// counts how far it got, and leaves the pool in the same state: every
// worker serving, some on new processes, the rest on old ones (a start cut
// short is closed). Either way, a later call replaces every worker again.
//
// Calls of RecycleWorkers run one after another: a second waits for the
// first, or for its ctx. After Shutdown or Close it returns ErrClosed, and
// when either begins during the call, RecycleWorkers starts no more
// processes and returns ErrClosed.
//
// An InProcess pool has no worker process to replace, and a Remote pool's
// processes are its nodes' own: for either, RecycleWorkers does nothing
// and returns an error matching errors.ErrUnsupported, so that a deploy
// step that expected new worker code in service learns that it is not.
// Recycle a Remote pool's workers with RecycleWorkers on each node's local
// pool.
func (p *Pool) RecycleWorkers(ctx context.Context) error {
	if err := p.usable(); err != nil {
		return err
	}
	if ctx == nil {
		return errNilContext
	}
	switch p.opts.Isolation { // never changes after New
	case InProcess:
		return errRecycleInProcess
	case Remote:
		return errRecycleRemote
	}
	select {
	case p.recycling <- struct{}{}:
	case <-ctx.Done():
		return fmt.Errorf("pool: RecycleWorkers: waiting for another RecycleWorkers: %w", ctx.Err())
	}
	defer func() { <-p.recycling }()
	workers, err := p.serving()
	if err != nil {
		return err
	}
	dones := make([]<-chan struct{}, 0, len(workers))
	for _, w := range workers {
		done, err := w.runner.(seam.Renewer).Renew(ctx)
		switch {
		case errors.Is(err, seam.ErrClosed):
			return ErrClosed
		case err != nil && ctx.Err() != nil:
			return recycleStopped(len(workers), dones, ctx.Err())
		case err != nil:
			return fmt.Errorf("pool: RecycleWorkers: worker %d: %w (%s)", w.id, err, recycleState(len(workers), dones))
		}
		dones = append(dones, done)
		if !p.renewSoon(w) {
			return ErrClosed
		}
	}
	for _, done := range dones {
		select {
		case <-done:
		case <-p.stop.Done():
			return ErrClosed
		case <-ctx.Done():
			return recycleStopped(len(workers), dones, ctx.Err())
		}
	}
	if p.closing() {
		return ErrClosed
	}
	return nil
}

var (
	errRecycleInProcess = fmt.Errorf("pool: RecycleWorkers: an InProcess pool has no worker processes; "+
		"its tasks run this process's own code: %w", errors.ErrUnsupported)
	errRecycleRemote = fmt.Errorf("pool: RecycleWorkers: a Remote pool's worker processes are its nodes' own; "+
		"call RecycleWorkers on each node's local pool: %w", errors.ErrUnsupported)
)

// serving returns the workers serving now, in the order they started;
// ErrClosed after Shutdown or Close.
func (p *Pool) serving() ([]*worker, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.state != open {
		return nil, ErrClosed
	}
	workers := make([]*worker, 0, len(p.all))
	for w := range p.all {
		workers = append(workers, w)
	}
	slices.SortFunc(workers, func(a, b *worker) int { return a.id - b.id })
	return workers, nil
}

// renewSoon makes w put the process its runner was handed in service now
// if it is idle, or before it parks next (see nextJob); its next task
// would anyway. false means the pool is closing.
func (p *Pool) renewSoon(w *worker) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.state != open {
		return false
	}
	if _, ok := p.all[w]; !ok {
		return true // it left: its runner closed, and its done with it
	}
	w.renew = true
	if i := slices.Index(p.idle, w); i >= 0 {
		p.idle = slices.Delete(p.idle, i, i+1)
		w.wake <- struct{}{} // buffered, and w was idle: never blocks
	}
	return true
}

// closing reports whether Shutdown or Close has begun.
func (p *Pool) closing() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.state != open
}

// recycleStopped is RecycleWorkers' error when ctx ended, err being ctx's.
func recycleStopped(workers int, dones []<-chan struct{}, err error) error {
	return fmt.Errorf("pool: RecycleWorkers stopped: %s: %w", recycleState(workers, dones), err)
}

// recycleState says how far RecycleWorkers got: every worker serves, some
// on new processes, some about to switch, the rest on old ones.
func recycleState(workers int, dones []<-chan struct{}) string {
	replaced := 0
	for _, done := range dones {
		select {
		case <-done:
			replaced++
		default:
		}
	}
	return fmt.Sprintf("of %d workers, %d run a new process, %d switch to theirs after their current task, %d keep their old one",
		workers, replaced, len(dones)-replaced, workers-len(dones))
}
