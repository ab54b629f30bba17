package pool

import (
	"fmt"
	"math"
	"time"
)

// QueueDelay is controlled-delay queue management, as in Facebook's "Fail
// at Scale" (after CoDel): a queue that has been empty within the last
// Interval is absorbing a burst and may hold a task up to Interval; a queue
// that has not been empty for a whole Interval is standing — the load
// exceeds what the workers do — and a task that waited longer than Target
// there is failed instead of run. Its caller (who may well have given up
// already) gets an error matching ErrQueueFull, which WriteError answers
// with 503.
//
// The limits are fixed (Target, Interval), or scale with the pool's own
// tasks (TargetRuns, IntervalRuns), or both: the larger applies. The unit
// of the scaled ones is the time the pool takes to finish one task when
// every worker is busy, its recent average run time ÷ Workers — the same
// unit Shed predicts waits in. Until a task has finished there is no unit
// and only the fixed limits apply; with none set, nothing is failed.
//
// The trade-off: without it, a standing queue serves every task late, each
// after the full queue wait; with it, the oldest tasks are dropped so that
// the newer ones, whose callers still wait, run while they matter. Work is
// lost either way under overload; QueueDelay loses the work nobody wants.
// A short Target keeps the wait of what runs short but, once it is below
// about one task's drain time, leaves workers idle while work is offered
// (nothing young enough is queued); a long Interval absorbs longer bursts
// but lets a standing queue serve late for longer before it is detected.
// DefaultQueueDelay is the measured compromise.
//
// The zero value disables it. Shed with MaxWait bounds the wait of what is
// admitted before it queues; QueueDelay catches what was admitted on an
// optimistic prediction and what queued while no one looked.
type QueueDelay struct {
	// Target is the longest wait in a standing queue.
	Target time.Duration
	// Interval is the longest wait otherwise, and the window for
	// "standing".
	Interval time.Duration
	// TargetRuns and IntervalRuns raise Target and Interval to that many
	// drain times of one task (RecentRunTime ÷ Workers), when larger.
	TargetRuns, IntervalRuns float64
}

// DefaultQueueDelay is measured, not the paper's: in a standing queue a
// task may wait two drain times of one task (RecentRunTime ÷ Workers), and
// a queue is standing once it has not been empty for four, with Fail at
// Scale's 5 ms and 100 ms as floors for short tasks.
//
// How it was chosen: go run ./bench/lab -sweep -phase 4s [-job 10ms]
// offers a one-worker pool (MaxQueue 1.6 s of work, Shed on queue full
// only, clients giving up after 2 s) Poisson jobs at 0.5×, 1×, 2×, 5×, 10×
// its capacity and back to 0.5×, 4 s each, for several settings. With
// 200 ms jobs: without QueueDelay, goodput stays at 90–100% of capacity
// but accepted jobs wait until the clients' patience runs out (p99
// 1.9 s); the paper's fixed 5 ms/100 ms fails almost every queued task,
// leaving the worker idle while work is offered (goodput 60–90%, and half
// the jobs offered at 0.5–1× lost); 2/4 drain times (400 ms/800 ms)
// keeps goodput at 95–100% with an accepted p99 of 0.8 s. One drain time
// for Target measured about the same (p99 0.8–1.0 s over two sweeps) but
// sits on an edge: in a full bounded queue the youngest task is about one
// run old when the worker looks, so at times every queued task goes, the
// queue empties and the next ones may wait a whole Interval. Eight drain
// times for Interval lets a standing queue serve late for longer (p99
// 1.3 s) for no more goodput. With 10 ms jobs the Interval floor applies (20 ms/100 ms):
// goodput 84–96% against 96–98% without QueueDelay, accepted p99 77 ms
// against 1.7 s. The cost: no job was failed at 0.5× before the overload,
// but at 1×, where Poisson arrivals run ahead of the worker for a while,
// 15–27% of that phase's jobs were failed rather than served late.
var DefaultQueueDelay = QueueDelay{
	Target: 5 * time.Millisecond, Interval: 100 * time.Millisecond,
	TargetRuns: 2, IntervalRuns: 4,
}

func (q QueueDelay) enabled() bool { return q != QueueDelay{} }

func (q QueueDelay) check() error {
	if !q.enabled() {
		return nil
	}
	bad := func(f float64) bool { return f < 0 || math.IsNaN(f) || math.IsInf(f, 0) }
	switch {
	case q.Target < 0 || q.Interval < 0 || bad(q.TargetRuns) || bad(q.IntervalRuns):
		return fmt.Errorf("pool: QueueDelay %+v: negative or not finite", q)
	case q.Target == 0 && q.TargetRuns == 0, q.Interval == 0 && q.IntervalRuns == 0:
		return fmt.Errorf("pool: QueueDelay %+v: want a Target (or TargetRuns) and an Interval (or IntervalRuns)", q)
	case q.Interval > 0 && q.Target > q.Interval, q.IntervalRuns > 0 && q.TargetRuns > q.IntervalRuns:
		return fmt.Errorf("pool: QueueDelay %+v: want Target <= Interval and TargetRuns <= IntervalRuns", q)
	}
	return nil
}

// limits are the target and interval in force when one task takes unit to
// drain (0: not known yet). A zero interval means fail nothing.
func (q QueueDelay) limits(unit time.Duration) (target, interval time.Duration) {
	scaled := func(fixed time.Duration, runs float64) time.Duration {
		return max(fixed, time.Duration(runs*float64(unit)))
	}
	target, interval = scaled(q.Target, q.TargetRuns), scaled(q.Interval, q.IntervalRuns)
	if target <= 0 {
		return 0, 0
	}
	return target, max(interval, target)
}

// overdue reports whether a task queued since since is to be failed at
// time t, given when the queue was last empty and one task's drain time,
// and the limit that applied.
func (q QueueDelay) overdue(since, t, lastEmpty int64, unit time.Duration) (time.Duration, bool) {
	target, interval := q.limits(unit)
	if interval <= 0 {
		return 0, false
	}
	waited := time.Duration(t - since)
	limit := interval
	if time.Duration(t-lastEmpty) > interval {
		limit = target // the queue is standing
	}
	return limit, waited > limit
}

// overdue is QueueDelay.overdue for this pool's queue now. p.mu is held.
func (p *Pool) overdue(since, t int64) (time.Duration, bool) {
	unit := time.Duration(p.stats.recentRun.Load() / int64(max(1, p.opts.Workers)))
	return p.opts.QueueDelay.overdue(since, t, p.lastEmpty, unit)
}

// errOverdue is the error of a task failed by QueueDelay.
func errOverdue(waited, limit time.Duration) error {
	return fmt.Errorf("%w: the task waited %v in the queue, over the %v allowed", ErrQueueFull, waited.Round(time.Microsecond), limit)
}
