package natsjobs

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"time"
)

// JobEvent is something that happened to a job, as the process it
// happened in saw it. A Queue logs each one (see Options.Logger,
// ServeOptions.Logger), counts it in Stats, and hands it to
// Options.OnJobEvent.
type JobEvent struct {
	Kind  JobEventKind
	Queue string
	ID    ID
	Task  string
	// Attempt is the attempt's number, from 1 (JobStarted, JobSucceeded,
	// JobRetried, JobDead); for JobCanceled, the attempts the job had
	// begun; 0 for JobEnqueued.
	Attempt int
	// Err is the error's text, as the job's status records it (JobRetried,
	// JobDead).
	Err string
	// Took is how long the attempt ran in the pool (JobSucceeded,
	// JobRetried, and JobDead after a run); 0 otherwise.
	Took time.Duration
}

// JobEventKind says what a JobEvent reports. Kinds follow pool's naming
// rule (see pool.WorkerEventKind): the subject, a job, then what
// happened to it.
type JobEventKind int

// The kinds of JobEvent, and the level each is logged at.
const (
	// JobEnqueued: Enqueue stored a job, or Retry sent a dead one back
	// (Debug).
	JobEnqueued JobEventKind = iota + 1
	// JobStarted: a Serve claimed the job and its pool took the attempt
	// (Debug). An attempt that a stopping Serve hands back (see
	// ServeOptions.Drain) has no event of its end: the job starts again
	// on another Serve.
	JobStarted
	// JobSucceeded: the attempt's result is recorded; the job is
	// Succeeded (Debug).
	JobSucceeded
	// JobRetried: the attempt failed and the job waits for the next one
	// (Info).
	JobRetried
	// JobDead: the job failed for good (its last attempt, a Permanent
	// error, a panic, ...) and is kept aside for Retry (Warn).
	JobDead
	// JobCanceled: Cancel ended the job (Info).
	JobCanceled
)

func (k JobEventKind) String() string {
	switch k {
	case JobEnqueued:
		return "enqueued"
	case JobStarted:
		return "started"
	case JobSucceeded:
		return "succeeded"
	case JobRetried:
		return "retried"
	case JobDead:
		return "dead"
	case JobCanceled:
		return "canceled"
	case 0:
		return "none"
	}
	return fmt.Sprintf("JobEventKind(%d)", int(k))
}

func (k JobEventKind) level() slog.Level {
	switch k {
	case JobRetried, JobCanceled:
		return slog.LevelInfo
	case JobDead:
		return slog.LevelWarn
	}
	return slog.LevelDebug
}

// logger is where the queue's own events go (Enqueue, Retry, Cancel),
// and a Serve's unless its options name another.
func (q *Queue) logger() *slog.Logger { return cmp.Or(q.o.Logger, slog.Default()) }

// report counts ev, logs it to log and hands it to the hook, in that
// order (so that a hook that hears of an event reads Stats counting it),
// on the goroutine it happened on and under no lock.
func (q *Queue) report(log *slog.Logger, ev JobEvent) {
	ev.Queue = q.o.Name
	q.counts.count(ev)
	q.log(log, ev)
	if q.o.OnJobEvent != nil {
		q.o.OnJobEvent(ev)
	}
}

// log writes ev as one record, when log takes records of its level:
// most jobs' events are at Debug, and cost nothing more where that is
// off.
func (q *Queue) log(log *slog.Logger, ev JobEvent) {
	level := ev.Kind.level()
	if !log.Enabled(context.Background(), level) {
		return
	}
	attrs := []slog.Attr{slog.String("queue", ev.Queue), slog.String("job", string(ev.ID)),
		slog.String("task", ev.Task), slog.String("event", ev.Kind.String())}
	if ev.Attempt != 0 {
		attrs = append(attrs, slog.Int("attempt", ev.Attempt))
	}
	if ev.Took != 0 {
		attrs = append(attrs, slog.Duration("took", ev.Took))
	}
	if ev.Err != "" {
		attrs = append(attrs, slog.String("err", ev.Err))
	}
	log.LogAttrs(context.Background(), level, "natsjobs: job "+string(ev.ID)+" "+ev.Kind.String(), attrs...)
}

// report reports an event of the attempt's job, to its Serve's logger.
func (a *attempt) report(kind JobEventKind, errText string) {
	ev := JobEvent{Kind: kind, ID: a.id, Task: a.task, Attempt: a.rec.Attempt, Err: errText}
	if kind != JobStarted {
		ev.Took = a.took
	}
	a.s.q.report(a.s.log, ev)
}
