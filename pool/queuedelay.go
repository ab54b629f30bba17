package pool

import (
	"fmt"
	"time"
)

// QueueDelay is controlled-delay queue management, as in Facebook's "Fail
// at Scale" (after CoDel): a queue that drains now and then is absorbing a
// burst and may hold a task up to Interval; a queue that has not been empty
// for a whole Interval is standing — the load exceeds what the workers do —
// and a task that waited longer than Target there is failed instead of run.
// Its caller (who may well have given up already) gets an error matching
// ErrQueueFull, which WriteError answers with 503.
//
// The trade-off: without it, a standing queue serves every task late, each
// after the full queue wait; with it, the oldest tasks are dropped so that
// the newer ones, whose callers still wait, run while they matter. Work is
// lost either way under overload; QueueDelay loses the work nobody wants.
//
// DefaultQueueDelay holds the paper's values; the zero value disables it.
type QueueDelay struct {
	Target   time.Duration // the longest wait in a standing queue
	Interval time.Duration // the longest wait otherwise, and the window for "standing"
}

// DefaultQueueDelay is Fail at Scale's setting: 5 ms target, 100 ms interval.
var DefaultQueueDelay = QueueDelay{Target: 5 * time.Millisecond, Interval: 100 * time.Millisecond}

func (q QueueDelay) enabled() bool { return q.Interval > 0 }

func (q QueueDelay) check() error {
	if q == (QueueDelay{}) {
		return nil
	}
	if q.Target <= 0 || q.Interval < q.Target {
		return fmt.Errorf("pool: QueueDelay %+v: want 0 < Target <= Interval", q)
	}
	return nil
}

// overdue reports whether a task queued since since is to be failed at
// time t, given when the queue was last empty.
func (q QueueDelay) overdue(since, t, lastEmpty int64) (time.Duration, bool) {
	waited := time.Duration(t - since)
	limit := q.Interval
	if time.Duration(t-lastEmpty) > q.Interval {
		limit = q.Target // the queue is standing
	}
	return limit, waited > limit
}

// errOverdue is the error of a task failed by QueueDelay.
func errOverdue(waited, limit time.Duration) error {
	return fmt.Errorf("%w: the task waited %v in the queue, over the %v allowed", ErrQueueFull, waited.Round(time.Microsecond), limit)
}
