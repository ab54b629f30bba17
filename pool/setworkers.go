package pool

import (
	"fmt"

	"github.com/offloadgo/offload/internal/seam"
)

// SetWorkers changes the most tasks p runs at once (Options.Workers) to n,
// while p runs, as ants's Tune and pond's Resize do. It takes p's lock
// briefly and never waits for a task.
//
// The new limit applies to the next submission. MinWorkers is lowered to
// n if it was above. An auto MaxQueue (Options.MaxQueue 0) follows n, to
// n², and a MaxQueue set in Options stays as set, so the capacity becomes
// n + MaxQueue. When it falls below what p holds, the tasks already
// accepted stay queued and run in turn, and new submissions get
// ErrQueueFull until there is room; when it grows, callers blocked in
// SubmitBlocking get the new room at once.
//
// Running tasks are not interrupted. With fewer workers, idle workers
// above n exit at once and busy ones as their task returns; a Subprocess
// pool's worker processes exit with them. With more, workers start for
// the tasks already queued (up to n) and, as before, on demand; a
// Subprocess pool's processes start with them. In a Remote pool n caps
// the calls in flight to its nodes: Load.MaxWorkers is n or the live
// nodes' slots, whichever is fewer.
//
// Load, Shed's predictions, QueueDelay, Stats and Options see the new
// Workers at once; Load.Workers and Stats.Workers count live workers, so
// they follow as workers start and exit.
//
// n < 1 is an error matching ErrInvalidWorkers, and after Shutdown or
// Close SetWorkers returns ErrClosed; either leaves p as it was. It is
// safe for concurrent use.
func (p *Pool) SetWorkers(n int) error {
	if err := p.usable(); err != nil {
		return err
	}
	if n < 1 {
		return fmt.Errorf("%w: SetWorkers(%d), want at least 1", ErrInvalidWorkers, n)
	}
	p.resizing.Lock()
	defer p.resizing.Unlock()
	p.mu.Lock()
	if p.state != open {
		p.mu.Unlock()
		return ErrClosed
	}
	p.opts.setWorkers(n)
	p.setLimits()
	p.dismissIdleAbove(n)
	for range min(p.queue.n, n-p.staying()) {
		p.spawn() // for the queued tasks; more start on demand
	}
	p.grantRoomLocked()
	p.startReaper() // MinWorkers may have fallen below the workers kept
	p.mu.Unlock()
	if r, ok := p.transport.(seam.Resizer); ok {
		r.Resize(n)
	}
	return nil
}

// dismissIdleAbove tells idle workers to exit, the longest parked first,
// until the pool keeps n workers or none is idle; busy workers above n
// exit when their task returns (see work). p.mu is held.
func (p *Pool) dismissIdleAbove(n int) {
	k := min(max(p.staying()-n, 0), len(p.idle))
	for _, w := range p.idle[:k] {
		p.dismiss(w)
	}
	p.idle = append(p.idle[:0], p.idle[k:]...)
}
