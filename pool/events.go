package pool

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/offloadgo/offload/cancel"
	"github.com/offloadgo/offload/internal/seam"
)

// WorkerEvent is something that happened to one of a pool's workers: a
// worker process (Subprocess) started, did not, was recycled, terminated,
// crashed or retired; a Remote pool's node joined, left or was lost, or a
// task was canceled on it; or, in a pool of any Isolation, a worker's task
// ran past Options.SlowTaskAfter. A pool logs each one to Options.Logger
// and hands it to Options.OnWorkerEvent.
type WorkerEvent struct {
	Kind   WorkerEventKind
	Worker int // the pool's number for the worker, as in the logs ("worker=3"); 0 for a node's events
	PID    int // the process's id; 0 for a start that failed, a node's events, or a task in process or on a node
	// Took is how long the start took, to the worker's hello
	// (WorkerStarted).
	Took time.Duration
	// Replacing says why the process that this one replaces ended, or 0
	// for a worker's first process (WorkerStarted).
	Replacing WorkerEventKind
	// Exit is how the process ended: exit status or signal, memory limit,
	// stderr tail (WorkerCrashed).
	Exit *cancel.Exit
	// Err is why the start failed (WorkerStartFailed), why a node was
	// lost (NodeLost), or that it was evicted (NodeLeft).
	Err error
	// Node is the node's ID, for a Remote pool's events: NodeJoined,
	// NodeLeft, NodeLost, NodeTaskCanceled, and WorkerSlowTask for a slow
	// task that runs there ("" if it still waits for a node's free slot).
	// "" for a worker process.
	Node string
	// Task is the slow task's name, and Running how long it had run when
	// reported: since its worker picked it up, as Stats.OldestRunning
	// counts (WorkerSlowTask).
	Task    string
	Running time.Duration
}

// WorkerEventKind says what a WorkerEvent reports.
//
// A kind is named for its subject, then what happened to it or on it:
// WorkerStarted, NodeLost; NodeTaskCanceled (on a node, a task was
// canceled), WorkerSlowTask (on a worker, a task ran slow). A kind means
// one thing in every Isolation; a new subject gets kinds of its own
// rather than borrowing another's. Packages that report events of their
// own name their kinds by the same rule.
type WorkerEventKind int

// The kinds of WorkerEvent, and the level each is logged at. (They mirror
// the seam's kinds, in order; a test holds them equal.)
const (
	// WorkerStarted: a process is up and ready to serve (Debug).
	WorkerStarted WorkerEventKind = iota + 1
	// WorkerStartFailed: a process did not come up; the task waiting for
	// it fails with ErrWorkerStartFailed (Error). One per start: the
	// tasks refused while the pool waits to start again report none.
	WorkerStartFailed
	// WorkerRecycled: a process served MaxTasksPerWorker tasks, or
	// RecycleWorkers put a new one in its place, and is replaced (Info).
	WorkerRecycled
	// WorkerTerminated: a process was killed for a task whose caller gave
	// up or whose pool closed, because the task did not return within
	// TerminateGrace of being told to stop, and is replaced (Info). A task
	// that returns in time keeps its process, and there is no event.
	WorkerTerminated
	// WorkerCrashed: a process died on its own — exit, signal, fatal
	// error, memory limit — and is replaced (Warn).
	WorkerCrashed
	// WorkerRetired: a process broke its channel's books (a reply it could
	// not send, a call it could not read) and is replaced (Warn).
	WorkerRetired
	// NodeJoined: a Remote pool's node answered its first ping and takes
	// calls (Info).
	NodeJoined
	// NodeLeft: a node said it leaves and has no call of this pool's
	// left, or was evicted to make room in a full node table, Err saying
	// so (Info).
	NodeLeft
	// NodeLost: a node went silent past the liveness bound, or is gone;
	// its calls fail with ErrNodeLost, and it counts in Stats.Crashed
	// (Warn).
	NodeLost
	// NodeTaskCanceled: a task's caller gave up (or its pool closed)
	// while it ran on a node, and the node was told to cancel it; it
	// counts in Stats.CanceledOnNode (Info).
	NodeTaskCanceled
	// WorkerSlowTask: a task has run past Options.SlowTaskAfter and still
	// runs; it is reported once, and nothing is done to it (Warn). It is
	// the pool's own kind, in any Isolation, not the seam's.
	WorkerSlowTask
)

func (k WorkerEventKind) String() string {
	switch k {
	case WorkerStarted:
		return "started"
	case WorkerStartFailed:
		return "start failed"
	case WorkerRecycled:
		return "recycled"
	case WorkerTerminated:
		return "terminated"
	case WorkerCrashed:
		return "crashed"
	case WorkerRetired:
		return "retired"
	case NodeJoined:
		return "joined"
	case NodeLeft:
		return "left"
	case NodeLost:
		return "lost"
	case NodeTaskCanceled:
		return "task canceled"
	case WorkerSlowTask:
		return "slow task"
	case 0:
		return "none"
	}
	return fmt.Sprintf("WorkerEventKind(%d)", int(k))
}

// poolEvents is how a pool's transport reports to it: it counts, logs
// and calls the pool's hook. The pool reports its slow tasks through it
// too (see slowtask.go).
type poolEvents struct {
	pool   *Pool
	stats  *recorder
	logger *slog.Logger
	hook   func(WorkerEvent)
}

// MoreSlots hands the room that the transport's workers now offer to the
// pool's SubmitBlocking callers (see grantRoom).
func (e poolEvents) MoreSlots() { e.pool.grantRoom() }

func (e poolEvents) Event(ev seam.Event) {
	switch ev.Kind {
	case seam.Terminated:
		e.stats.terminated.Add(1)
	case seam.NodeTaskCanceled:
		e.stats.canceledOnNode.Add(1)
	case seam.Crashed, seam.NodeLost:
		e.stats.crashed.Add(1)
	case seam.Recycled:
		e.stats.recycled.Add(1)
	}
	e.emit(WorkerEvent{Kind: WorkerEventKind(ev.Kind), Worker: ev.Worker, PID: ev.PID, Took: ev.Took,
		Replacing: WorkerEventKind(ev.Replacing), Exit: ev.Exit, Err: ev.Err, Node: ev.Node})
}

// emit logs ev and hands it to the pool's hook. Never under the pool's
// lock: the logger and the hook are the user's code.
func (e poolEvents) emit(ev WorkerEvent) {
	e.log(ev)
	if e.hook != nil {
		e.hook(ev)
	}
}

// log writes ev as one structured record.
func (e poolEvents) log(ev WorkerEvent) {
	if ev.Kind == WorkerSlowTask {
		e.logSlow(ev)
		return
	}
	if ev.Node != "" {
		e.logNode(ev)
		return
	}
	level := slog.LevelInfo
	attrs := []slog.Attr{slog.Int("worker", ev.Worker), slog.String("event", ev.Kind.String())}
	if ev.PID != 0 {
		attrs = append(attrs, slog.Int("pid", ev.PID))
	}
	switch ev.Kind {
	case WorkerStarted:
		level = slog.LevelDebug
		attrs = append(attrs, slog.Duration("took", ev.Took))
		if ev.Replacing != 0 {
			attrs = append(attrs, slog.String("replacing", ev.Replacing.String()))
		}
	case WorkerStartFailed:
		level = slog.LevelError
		attrs = append(attrs, slog.Any("err", ev.Err))
	case WorkerCrashed, WorkerRetired:
		level = slog.LevelWarn
	}
	if x := ev.Exit; x != nil {
		attrs = append(attrs, slog.Int("code", x.Code))
		if x.Signal != 0 {
			attrs = append(attrs, slog.String("signal", x.Signal.String()))
		}
		if x.Killed != cancel.NotKilled {
			attrs = append(attrs, slog.String("killed", x.Killed.String()))
		}
		if x.Crash != "" {
			attrs = append(attrs, slog.String("crash", x.Crash))
		}
	}
	e.logger.LogAttrs(context.Background(), level, "pool: worker process "+ev.Kind.String(), attrs...)
}

// logNode writes a Remote pool's event, about a node, as one record.
func (e poolEvents) logNode(ev WorkerEvent) {
	level, msg := slog.LevelInfo, "pool: node "+ev.Node+" "+ev.Kind.String()
	switch ev.Kind {
	case NodeLost:
		level = slog.LevelWarn
	case NodeTaskCanceled:
		msg = "pool: task canceled on node " + ev.Node
	}
	attrs := []slog.Attr{slog.String("node", ev.Node), slog.String("event", ev.Kind.String())}
	if ev.Err != nil {
		attrs = append(attrs, slog.String("why", ev.Err.Error()))
	}
	e.logger.LogAttrs(context.Background(), level, msg, attrs...)
}

// logSlow writes a slow task's event as one record, at Warn.
func (e poolEvents) logSlow(ev WorkerEvent) {
	attrs := []slog.Attr{slog.String("task", ev.Task), slog.Duration("running", ev.Running),
		slog.Int("worker", ev.Worker), slog.String("event", ev.Kind.String())}
	if ev.PID != 0 {
		attrs = append(attrs, slog.Int("pid", ev.PID))
	}
	if ev.Node != "" {
		attrs = append(attrs, slog.String("node", ev.Node))
	}
	e.logger.LogAttrs(context.Background(), slog.LevelWarn, "pool: task "+ev.Task+" still running after "+ev.Running.Round(time.Millisecond).String(), attrs...)
}
