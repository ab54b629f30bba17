package pool

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/offloadgo/offload/internal/seam"
)

// RecycleWorkers replaces every worker process of a Subprocess pool with a
// new one, without dropping a call or capacity: to put a new worker
// program in service once it is deployed where the workers run from, or to
// shed what long-lived workers accumulate. (Workers that are this binary
// run the file at its path then, which must register the tasks the service
// calls, with the same types.)
//
// One worker at a time, a new process starts and says hello; then the old
// one is retired (a WorkerRecycled event, counted in Stats.Recycled): at
// once if its worker is idle, else as soon as its current task returns.
// No task is interrupted, and none waits for a start, since the new
// process is up before the old one leaves. An old process stays for its
// long task, so for a while a pool of n workers may run up to 2n processes.
//
// RecycleWorkers blocks until every worker that served when it was called
// runs its new process (one that exits meanwhile, by SetWorkers or
// IdleTimeout, has nothing left to replace), and returns nil. Workers that
// start meanwhile are new already. No setting changes: Workers,
// MinWorkers, IdleTimeout and MaxTasksPerWorker apply as before, a new
// process counting its tasks from 0 and an idle worker keeping its idle
// time.
//
// If a new process does not start or say hello within StartTimeout,
// RecycleWorkers stops there and returns an error matching
// ErrWorkerStartFailed, with the start's account: the workers not reached
// keep their old processes and serve on, and those already handed a new
// one switch after their current task. If ctx ends first, it returns an
// error matching ctx's error, saying how far it got, and leaves the pool
// in that same state: every worker serving, some on new processes, the
// rest on old ones (a start cut short is closed). A later call replaces
// every worker again. Its starts never wait out the pool's backoff after
// failed starts (see ErrWorkerStartFailed): one that comes up ends it;
// one that fails holds no other start back.
//
// RecycleWorkers is safe for concurrent use: calls run one after another,
// a second waiting for the first (or for its own ctx). After Shutdown or
// Close it returns ErrClosed; when either begins during the call, it
// starts no more processes and returns ErrClosed.
//
// An InProcess pool has no worker process to replace, and a Remote pool's
// processes are its nodes' own: for either, whatever its state,
// RecycleWorkers does nothing and returns an error matching
// errors.ErrUnsupported, so that a deploy step expecting new worker code
// in service learns that none went in. A Remote pool's workers are
// recycled by RecycleWorkers on each node's local pool.
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
