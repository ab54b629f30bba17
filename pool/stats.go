package pool

import (
	"sync/atomic"
	"time"
)

// Stats is a snapshot of a pool's state and history, from Pool.Stats.
// Counts are since New. Every accepted task ends in exactly one of
// Completed, Failed or Canceled; until then it is Queued or running.
type Stats struct {
	Workers int // live workers
	Busy    int // workers running a task, including tasks whose caller gave up
	Queued  int // accepted tasks waiting for a worker

	Submitted  uint64 // tasks accepted
	Completed  uint64 // tasks that returned a nil error to their caller
	Failed     uint64 // tasks that returned an error or panicked
	Rejected   uint64 // submissions refused: ErrQueueFull, ErrClosed, ErrUnknownTask, a done ctx
	Canceled   uint64 // tasks resolved early: their ctx ended, or the pool closed
	Terminated uint64 // running tasks whose worker process was killed
	Crashed    uint64 // worker processes that died under a task

	WaitTime Summary // from acceptance to a worker starting the task
	RunTime  Summary // from start to the task's return

	// Utilization is the workers' busy time over their lifetime since New,
	// in [0, 1]: like Node's event loop utilisation, summed over workers.
	Utilization float64
}

// recorder is the pool's counters. Everything is atomic so that Stats (and
// the shed decision) never needs the pool's lock.
type recorder struct {
	workers, busy, queued atomic.Int64

	submitted, completed, failed, rejected atomic.Uint64
	canceled, terminated, crashed          atomic.Uint64

	waitTime, runTime histogram

	retiredNanos atomic.Int64 // summed lifetime of exited workers
	recentRun    atomic.Int64 // EWMA of run time, ns
}

// ran records a task that a worker finished; delivered says whether its
// result reached the caller (false when the caller had given up).
func (r *recorder) ran(wait, run int64, failed, delivered bool) {
	r.waitTime.record(wait)
	r.runTime.record(run)
	// An EWMA with weight 1/8 tracks the recent run time for predictions;
	// racing workers may lose an update, which only delays the average.
	old := r.recentRun.Load()
	r.recentRun.Store(old + (run-old)/8)
	if !delivered {
		return // counted as Canceled when its caller gave up
	}
	if failed {
		r.failed.Add(1)
	} else {
		r.completed.Add(1)
	}
}

func (r *recorder) workerExited(lifetime int64) { r.retiredNanos.Add(lifetime) }

// Stats returns a snapshot of the pool's counters. It takes the pool's lock
// only to add up the live workers' lifetimes. Safe for concurrent use, and
// after Close.
func (p *Pool) Stats() Stats {
	r := &p.stats
	s := Stats{
		Submitted:  r.submitted.Load(),
		Completed:  r.completed.Load(),
		Failed:     r.failed.Load(),
		Rejected:   r.rejected.Load(),
		Canceled:   r.canceled.Load(),
		Terminated: r.terminated.Load(),
		Crashed:    r.crashed.Load(),
		WaitTime:   r.waitTime.summary(),
		RunTime:    r.runTime.summary(),
	}
	t := now()
	lived := r.retiredNanos.Load()
	busy := int64(r.runTime.sum.Load())
	p.mu.Lock()
	// Read under the lock so that a task moving from the queue to a worker
	// is counted once.
	s.Workers, s.Busy, s.Queued = int(r.workers.Load()), int(r.busy.Load()), int(r.queued.Load())
	for w := range p.all {
		lived += t - w.born
		if w.current != nil {
			busy += t - w.startedAt.Load()
		}
	}
	p.mu.Unlock()
	if lived > 0 {
		s.Utilization = min(1, float64(busy)/float64(lived))
	}
	return s
}

// RecentRunTime is an exponentially weighted average of recent tasks' run
// time: cheap to read, for predicting queue waits (see Shed).
func (p *Pool) RecentRunTime() time.Duration {
	return time.Duration(p.stats.recentRun.Load())
}
