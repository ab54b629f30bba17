package pool

import (
	"sync/atomic"
	"time"
)

// TaskStats is what Stats.Tasks counts for one task name: the tasks of
// that name that ran, by what their caller got (a task whose caller gave
// up while it ran counts as Canceled), and their total run time. Tasks
// that never ran — rejected, or dropped from the queue — are counted in
// the pool's totals only.
type TaskStats struct {
	Completed, Failed, Canceled uint64
	RunTime                     time.Duration // summed over the runs
}

// taskTally is one worker's counts for one task name.
type taskTally struct {
	completed, failed, canceled, runNanos atomic.Uint64
}

// taskTallies is one worker's counts by task name: a map that only its
// owner writes (a worker, or the pool's lock for retired workers'), copied
// when a name is added, so that Stats reads it without a lock and a
// worker counts a task with one lookup and no allocation.
type taskTallies struct {
	m atomic.Pointer[map[string]*taskTally]
	// last is the name the owner counted last, lastTask its tally: a
	// worker that runs one task over and over skips the map.
	last     string
	lastTask *taskTally
}

// of returns the tally of task name, adding it if new. Only the owner
// calls it.
func (ts *taskTallies) of(name string) *taskTally {
	if ts.lastTask != nil && name == ts.last {
		return ts.lastTask
	}
	t := ts.lookup(name)
	ts.last, ts.lastTask = name, t
	return t
}

func (ts *taskTallies) lookup(name string) *taskTally {
	old := ts.m.Load()
	if old != nil {
		if t := (*old)[name]; t != nil {
			return t
		}
	}
	m := make(map[string]*taskTally, 1+lenOfTallies(old))
	if old != nil {
		for k, v := range *old {
			m[k] = v
		}
	}
	t := new(taskTally)
	m[name] = t
	ts.m.Store(&m)
	return t
}

func lenOfTallies(m *map[string]*taskTally) int {
	if m == nil {
		return 0
	}
	return len(*m)
}

// ran counts one run of the task; only the owner calls it.
func (t *taskTally) ran(run int64, o outcome) {
	t.runNanos.Store(t.runNanos.Load() + uint64(max(run, 0)))
	switch o {
	case completed:
		bump(&t.completed)
	case failed:
		bump(&t.failed)
	default: // canceled, or lost: someone resolved it first, for its caller's end
		bump(&t.canceled)
	}
}

// addTo adds the tallies into sum.
func (ts *taskTallies) addTo(sum map[string]TaskStats) {
	m := ts.m.Load()
	if m == nil {
		return
	}
	for name, t := range *m {
		s := sum[name]
		s.Completed += t.completed.Load()
		s.Failed += t.failed.Load()
		s.Canceled += t.canceled.Load()
		s.RunTime += time.Duration(t.runNanos.Load())
		sum[name] = s
	}
}

// merge adds o's tallies into ts; the caller owns ts.
func (ts *taskTallies) merge(o *taskTallies) {
	m := o.m.Load()
	if m == nil {
		return
	}
	for name, t := range *m {
		into := ts.of(name)
		into.completed.Store(into.completed.Load() + t.completed.Load())
		into.failed.Store(into.failed.Load() + t.failed.Load())
		into.canceled.Store(into.canceled.Load() + t.canceled.Load())
		into.runNanos.Store(into.runNanos.Load() + t.runNanos.Load())
	}
}
