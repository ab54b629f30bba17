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
// tasks (TargetDrainTimes, IntervalDrainTimes), or both: the larger
// applies. The unit of the scaled ones, one drain time, is the time the
// pool takes to finish one task when every worker is busy, its recent
// average run time ÷ Workers — the same unit Shed predicts waits in.
// Until a task has finished there is no unit and only the fixed limits
// apply; with none set, nothing is failed.
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
	// TargetDrainTimes and IntervalDrainTimes raise Target and Interval
	// to that many drain times of one task (RecentRunTime ÷ Workers), when
	// larger.
	TargetDrainTimes, IntervalDrainTimes float64
}

// DefaultQueueDelay returns the measured setting, not the paper's: in a
// standing queue a task may wait two drain times of one task
// (RecentRunTime ÷ Workers), and a queue is standing once it has not been
// empty for four, with Fail at Scale's 5 ms and 100 ms as floors for short
// tasks. docs/benchmarks.md's "How DefaultQueueDelay was chosen" gives the
// sweep behind it (go run ./bench/lab -sweep). Options.QueueDelay is not
// set to it by default: the zero QueueDelay fails nothing. It is a
// function, not a variable, so that no code can change what every caller
// gets.
func DefaultQueueDelay() QueueDelay {
	return QueueDelay{
		Target: 5 * time.Millisecond, Interval: 100 * time.Millisecond,
		TargetDrainTimes: 2, IntervalDrainTimes: 4,
	}
}

func (q QueueDelay) enabled() bool { return q != QueueDelay{} }

func (q QueueDelay) check() error {
	if !q.enabled() {
		return nil
	}
	bad := func(f float64) bool { return f < 0 || math.IsNaN(f) || math.IsInf(f, 0) }
	switch {
	case q.Target < 0 || q.Interval < 0 || bad(q.TargetDrainTimes) || bad(q.IntervalDrainTimes):
		return fmt.Errorf("pool: QueueDelay %+v: negative or not finite", q)
	case q.Target == 0 && q.TargetDrainTimes == 0, q.Interval == 0 && q.IntervalDrainTimes == 0:
		return fmt.Errorf("pool: QueueDelay %+v: want a Target (or TargetDrainTimes) and an Interval (or IntervalDrainTimes)", q)
	case q.Interval > 0 && q.Target > q.Interval, q.IntervalDrainTimes > 0 && q.TargetDrainTimes > q.IntervalDrainTimes:
		return fmt.Errorf("pool: QueueDelay %+v: want Target <= Interval and TargetDrainTimes <= IntervalDrainTimes", q)
	}
	return nil
}

// limits are the target and interval in force when one task takes unit to
// drain (0: not known yet). A zero interval means fail nothing.
func (q QueueDelay) limits(unit time.Duration) (target, interval time.Duration) {
	scaled := func(fixed time.Duration, runs float64) time.Duration {
		return max(fixed, time.Duration(runs*float64(unit)))
	}
	target, interval = scaled(q.Target, q.TargetDrainTimes), scaled(q.Interval, q.IntervalDrainTimes)
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
	unit := time.Duration(p.stats.recentRun.Load() / int64(max(1, p.workerLimit())))
	return p.opts.QueueDelay.overdue(since, t, p.lastEmpty, unit)
}

// handoffWait is what QueueDelay leaves a task handed straight to an idle
// worker to wait for room where it runs: the queue was empty, so not
// standing, and the task has waited nothing yet. 0 means no limit.
func (p *Pool) handoffWait() time.Duration {
	if p.transport == nil {
		return 0 // on every handoff in process: one test, no copy
	}
	qd := p.opts.QueueDelay
	if !qd.enabled() {
		return 0
	}
	unit := time.Duration(p.stats.recentRun.Load() / int64(max(1, p.workerLimit())))
	_, interval := qd.limits(unit)
	return max(interval, 0)
}

// remaining is what is left of limit after waiting waited, at least 1 ns
// (0 would mean no limit); 0 when limit is 0.
func remaining(limit time.Duration, waited int64) time.Duration {
	if limit <= 0 {
		return 0
	}
	return max(limit-time.Duration(waited), 1)
}

// errOverdue is the error of a task failed by QueueDelay.
func errOverdue(waited, limit time.Duration) error {
	return fmt.Errorf("%w: the task waited %v in the queue, over the %v allowed", ErrQueueFull, waited.Round(time.Microsecond), limit)
}
