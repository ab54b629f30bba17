package pool

import (
	"sync/atomic"
	"time"
)

// Stats is a snapshot of a pool's state and history, from Pool.Stats.
// Counts are since New. Every accepted task ends in exactly one of
// Completed, Failed or Canceled, by what its caller got; until then it is
// Queued or running.
type Stats struct {
	Workers int // live workers, including those starting
	Busy    int // workers running a task, including tasks whose caller gave up
	Queued  int // accepted tasks waiting for a worker

	Submitted uint64 // tasks accepted
	Completed uint64 // tasks whose caller got their result
	// Failed counts tasks whose caller got their error: the task returned
	// one, panicked, called runtime.Goexit, or its worker process died
	// (or its node was lost) under it.
	Failed   uint64
	Rejected uint64 // submissions refused: ErrQueueFull, ErrClosed, ErrUnknownTask, a nil or done ctx
	// Canceled counts tasks whose caller got a ctx error or ErrClosed
	// instead of a result: the ctx ended (while queued or running,
	// whichever side noticed first), the pool closed, or QueueDelay
	// dropped them.
	Canceled uint64
	// Terminated counts worker processes killed for a running task whose
	// caller gave up or whose pool closed, because the task did not return
	// within TerminateGrace. The task also counts as Canceled, and its
	// caller's error matches ErrTerminated; so does a caller's whose task
	// returned within the grace, whose process is kept and not counted
	// here.
	Terminated uint64
	// CanceledOnNode counts a Remote pool's tasks whose caller gave up (or
	// whose pool closed) while they ran on a node, which was told to
	// cancel them (each a NodeTaskCanceled event). The task also counts as
	// Canceled, and its caller's error matches ErrTerminated. What the
	// node does with its own worker (a kill, for a Subprocess node) counts
	// in the node's own pool.
	CanceledOnNode uint64
	// Crashed counts worker processes that died on their own: under a
	// task (which fails with ErrWorkerCrashed) or between tasks (which
	// costs no task: the next one goes to the replacement); for a Remote
	// pool, nodes lost (NodeLost).
	Crashed uint64
	// Recycled counts worker processes replaced after MaxTasksPerWorker
	// tasks or by RecycleWorkers.
	Recycled uint64

	// WaitTime is the time tasks spent in the queue: 0 for a task handed
	// straight to an idle worker. RunTime is from a worker picking a task
	// up to its return, for every task a worker finished.
	WaitTime, RunTime Summary

	// Utilization is the workers' busy time over their lifetime since New,
	// in [0, 1]: like Node's event loop utilisation, summed over workers.
	Utilization float64

	// Tasks breaks down the tasks that ran by task name, counted when
	// Completed, Failed and RunTime count them.
	Tasks map[string]TaskStats

	// Shed counts the requests the pool's Shed middleware answered 503
	// before their handler ran, by reason. They never reached the pool, so
	// no other count has them (Rejected counts submissions the pool
	// refused).
	Shed ShedStats

	// OldestRunning is how long the longest-running task has been running
	// (0 when none runs): a task that ignores its ctx holds its worker
	// until it returns, and this is where it shows.
	OldestRunning time.Duration
	// Slow counts the tasks that ran past Options.SlowTaskAfter, as each
	// passed it (each is also a WorkerSlowTask event); 0 with no
	// SlowTaskAfter.
	Slow uint64

	// MaxWorkers is the most tasks that may run at once now, as
	// Load.MaxWorkers: Options.Workers as SetWorkers last set it; for a
	// Remote pool, capped by the live nodes' slots (0 while no node is
	// live), whereas Workers counts the live ones.
	MaxWorkers int
}

// ShedStats counts the requests Shed turned away, by ShedReason.
type ShedStats struct {
	Closed, QueueFull, MaxWait, Deadline, NoNode, Lag uint64
}

// Total is every request Shed turned away.
func (s ShedStats) Total() uint64 {
	return s.Closed + s.QueueFull + s.MaxWait + s.Deadline + s.NoNode + s.Lag
}

// Count is the requests turned away for reason (0 for an unknown one).
func (s ShedStats) Count(reason ShedReason) uint64 {
	switch reason {
	case ShedClosed:
		return s.Closed
	case ShedQueueFull:
		return s.QueueFull
	case ShedMaxWait:
		return s.MaxWait
	case ShedDeadline:
		return s.Deadline
	case ShedNoNode:
		return s.NoNode
	case ShedLag:
		return s.Lag
	}
	return 0
}

// tally is what one worker records about the tasks it ran. It is written
// and read under the pool's lock: the worker records a task as it finishes
// it, between two tasks, when it holds the lock anyway.
type tally struct {
	waitTime, runTime           histogram
	completed, failed, canceled uint64
	lost                        uint64 // counted by whoever resolved them; here for tasks
	tasks                       taskTallies
}

// ran records a finished task and how it ended for its caller (lost: the
// caller gave up first, and whoever resolved it counted it).
func (t *tally) ran(wait, run int64, o outcome) {
	t.waitTime.record(wait)
	t.runTime.record(run)
	switch o {
	case completed:
		t.completed++
	case failed:
		t.failed++
	case canceled:
		t.canceled++
	case lost:
		t.lost++
	}
}

func (t *tally) merge(o *tally) {
	t.waitTime.merge(&o.waitTime)
	t.runTime.merge(&o.runTime)
	t.completed += o.completed
	t.failed += o.failed
	t.canceled += o.canceled
	t.lost += o.lost
}

// recorder is the pool's own counters. The gauges are written under the
// pool's lock and read without it (by Shed, say), so they are atomics
// updated by plain stores.
type recorder struct {
	workers, queued atomic.Int64
	gauges          gauges // inflight and busy: see publishGauges
	closed          atomic.Bool

	submitted uint64 // guarded by the pool's lock, which admission holds anyway

	rejected, canceled, terminated, crashed, recycled, slow atomic.Uint64
	canceledOnNode                                          atomic.Uint64
	shed                                                    [ShedLag + 1]atomic.Uint64 // by ShedReason; [0] unused

	exited      tally // of workers that have exited; guarded by the pool's lock
	exitedNanos int64 // their summed lifetime; guarded by the pool's lock
	recentRun   atomic.Int64
	// coldSince is when the pool's first task started, until a task has
	// finished (recentRun is set): see runTimeGuess.
	coldSince atomic.Int64
}

// runTimeGuess is the run time predictions use: recentRun, or before any
// task has finished, how long the first one has been running, which its
// run time will exceed. Without it a pool just started predicts no wait
// at all, and Shed admits up to the queue's bound.
func (r *recorder) runTimeGuess(clock *monoclock) time.Duration {
	if run := r.recentRun.Load(); run != 0 {
		return time.Duration(run)
	}
	if since := r.coldSince.Load(); since != 0 {
		return time.Duration(max(clock.now()-since, 0))
	}
	return 0
}

// noteRun feeds an EWMA (weight 1/8) of run time for predictions. Racing
// workers may lose an update, which only slows the average a little.
func (r *recorder) noteRun(run int64) {
	old := r.recentRun.Load()
	if old == 0 {
		r.recentRun.Store(max(run, 1)) // the first sample is the best guess
		return
	}
	r.recentRun.Store(old + (run-old)/8)
}

// Stats returns a snapshot of the pool's counters. It holds the pool's lock
// while it adds up the workers' tallies (a few microseconds). Safe for
// concurrent use, and after Close; the zero Stats for a Pool not made by
// New.
func (p *Pool) Stats() Stats {
	if p.usable() != nil {
		return Stats{}
	}
	r := &p.stats
	var sum tally
	t := p.clock.now()
	p.mu.Lock()
	s := Stats{
		Workers:   int(r.workers.Load()),
		Busy:      p.busy,
		Queued:    int(r.queued.Load()),
		Submitted: r.submitted,
	}
	sum.merge(&r.exited)
	tasks := map[string]TaskStats{}
	r.exited.addTasksTo(tasks)
	lived := r.exitedNanos
	var running, oldest int64
	for w := range p.all {
		sum.merge(&w.tally)
		w.tally.addTasksTo(tasks)
		lived += t - w.born
		if start := w.startedAt.Load(); w.current != nil && start != 0 { // 0: handed over, not started yet
			ran := t - start
			running += ran
			oldest = max(oldest, ran)
		}
	}
	p.mu.Unlock()
	s.Rejected, s.Canceled = r.rejected.Load(), r.canceled.Load()+sum.canceled
	s.Terminated, s.Crashed, s.Recycled = r.terminated.Load(), r.crashed.Load(), r.recycled.Load()
	s.CanceledOnNode = r.canceledOnNode.Load()
	s.Completed, s.Failed = sum.completed, sum.failed
	s.OldestRunning, s.Slow = time.Duration(oldest), r.slow.Load()
	s.MaxWorkers = p.workerLimit()
	s.Shed = ShedStats{Closed: r.shed[ShedClosed].Load(), QueueFull: r.shed[ShedQueueFull].Load(),
		MaxWait: r.shed[ShedMaxWait].Load(), Deadline: r.shed[ShedDeadline].Load(), NoNode: r.shed[ShedNoNode].Load(),
		Lag: r.shed[ShedLag].Load()}
	s.WaitTime, s.RunTime = sum.waitTime.summary(), sum.runTime.summary()
	if lived > 0 {
		busy := int64(sum.runTime.sum) + running
		s.Utilization = min(1, float64(busy)/float64(lived))
	}
	if len(tasks) > 0 {
		s.Tasks = tasks
	}
	return s
}
