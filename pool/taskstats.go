package pool

import "time"

// TaskStats is what Stats.Tasks counts for one task name: the tasks of
// that name that ran, by what their caller got (a task whose caller gave
// up while it ran counts as Canceled), and their total run time. Tasks
// that never ran — rejected, or dropped from the queue — are counted in
// the pool's totals only.
type TaskStats struct {
	Completed, Failed, Canceled uint64
	RunTime                     time.Duration // summed over the runs
}

// taskTallies is one worker's counts by task name, kept off the task's
// path: the worker's tally counts every task anyway, so a run of tasks of
// one name is charged to that name only when the worker turns to another
// name (or exits), as the tally's growth since the run began. Turning,
// charging and reading all happen under the pool's lock; the counts only
// grow, so no reading goes backwards.
type taskTallies struct {
	byName map[string]TaskStats
	// cur is the name of the tasks the worker has run since base, a
	// snapshot of its tally then; has is false before its first task.
	cur  string
	has  bool
	base TaskStats
}

// asTask is t's counts as a task name's: a task whose caller gave up
// first (lost) counts as canceled, for its caller's end.
func (t *tally) asTask() TaskStats {
	return TaskStats{
		Completed: t.completed,
		Failed:    t.failed,
		Canceled:  t.canceled + t.lost,
		RunTime:   time.Duration(t.runTime.sum),
	}
}

// turnTo makes name the name of the tasks t counts from now on: one
// string comparison when it is already. The pool's lock is held.
func (t *tally) turnTo(name string) {
	if t.tasks.has && t.tasks.cur == name {
		return
	}
	t.charge()
	t.tasks.cur, t.tasks.has = name, true
}

// charge adds what t counted since it turned to its current name to that
// name. The pool's lock is held.
func (t *tally) charge() {
	ts := &t.tasks
	now := t.asTask()
	if ts.has {
		ts.add(ts.cur, now.minus(ts.base))
	}
	ts.base = now
}

// addTasksTo adds t's counts by task name into sum, the current run's
// share included. The pool's lock is held.
func (t *tally) addTasksTo(sum map[string]TaskStats) {
	ts := &t.tasks
	for name, s := range ts.byName {
		sum[name] = sum[name].plus(s)
	}
	if ts.has {
		sum[ts.cur] = sum[ts.cur].plus(t.asTask().minus(ts.base))
	}
}

// merge adds o's counts by name into ts, o's current run included; the
// pool's lock is held and o's worker has exited.
func (ts *taskTallies) merge(o *tally) {
	o.charge()
	for name, s := range o.tasks.byName {
		ts.add(name, s)
	}
}

func (ts *taskTallies) add(name string, s TaskStats) {
	if ts.byName == nil {
		ts.byName = map[string]TaskStats{}
	}
	ts.byName[name] = ts.byName[name].plus(s)
}

func (s TaskStats) plus(o TaskStats) TaskStats {
	return TaskStats{s.Completed + o.Completed, s.Failed + o.Failed, s.Canceled + o.Canceled, s.RunTime + o.RunTime}
}

func (s TaskStats) minus(o TaskStats) TaskStats {
	return TaskStats{s.Completed - o.Completed, s.Failed - o.Failed, s.Canceled - o.Canceled, s.RunTime - o.RunTime}
}
