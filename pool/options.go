package pool

import (
	"fmt"
	"log/slog"
	"runtime"
	"slices"
	"time"

	"github.com/offloadgo/offload/internal/seam"
)

// Isolation selects the kind of worker a Pool runs tasks on.
type Isolation int

const (
	// InProcess runs tasks on goroutines: the fastest kind, but a running
	// task stops only when it returns (its ctx is cancelled; it must look).
	InProcess Isolation = iota
	// Subprocess runs tasks in worker processes: the program's own binary
	// re-executed, which must call Main first thing in main (and TestMain).
	// A running task can be killed, a crash fails only its own task, and a
	// task's memory can be capped. Inputs and outputs cross as msgpack
	// (exported fields only), so tasks must be registered at package level
	// and their types must encode, nested at most 100 deep (a task whose
	// types would lose a field is refused: see Register; a deeper value, a
	// long linked list say, fails where it is encoded); a round trip costs
	// tens of microseconds.
	// Structs cross as arrays of their fields, not maps from their names
	// (both ends are the same binary), unless the type can hold an
	// interface: a struct in an any decodes as a map[string]any, as ever.
	// A *transfer.Buffer in either moves through shared memory instead, as
	// a 29-byte reference whatever its size (see package transfer).
	// On Linux, macOS, FreeBSD, NetBSD and OpenBSD (MemoryLimit on Linux
	// only); elsewhere, Windows included, New returns an error that names
	// the platform and matches errors.ErrUnsupported; develop there with
	// InProcess (the same tasks and API) or Remote nodes.
	Subprocess
	// Remote runs tasks on worker nodes on other machines, through
	// Options.Transport (package natsremote makes one, and documents the
	// contract). A running task can be terminated on its node; a node
	// that stops answering fails its tasks with ErrNodeLost (which
	// matches ErrWorkerCrashed). Admission and the queue are this pool's;
	// a worker waiting for a node with a free slot counts as Busy, and
	// the wait in its task's WaitTime. Inputs and outputs cross as they
	// do for Subprocess, except that a *transfer.Buffer is copied.
	Remote
)

func (i Isolation) String() string {
	switch i {
	case InProcess:
		return "InProcess"
	case Subprocess:
		return "Subprocess"
	case Remote:
		return "Remote"
	}
	return fmt.Sprintf("Isolation(%d)", int(i))
}

// Special values of Options.MaxQueue.
const (
	// Unbounded lets the queue grow without limit: Submit never returns
	// ErrQueueFull. Use it for batch work whose size you bound yourself.
	Unbounded = -1
	// NoQueue makes Submit reject whenever every worker is busy.
	NoQueue = -2
)

// DefaultIdleTimeout is how long a worker above MinWorkers waits for work
// before it exits, when Options.IdleTimeout is zero.
const DefaultIdleTimeout = 10 * time.Second

// Options configures a Pool. The zero value is valid: InProcess workers,
// DefaultWorkers of them, a queue of Workers² and DefaultIdleTimeout.
type Options struct {
	// Workers is the most tasks that run at once. 0 means DefaultWorkers():
	// one less than GOMAXPROCS (at least 1), leaving a core for the
	// goroutines that serve requests. SetWorkers changes it while the pool
	// runs.
	Workers int
	// MinWorkers are started by New and kept however idle. 0 means workers
	// start on demand. It must not exceed Workers.
	MinWorkers int
	// MaxQueue is how many accepted tasks may wait for a worker. 0 means
	// auto = Workers² (piscina's 'auto'), which follows Workers when
	// SetWorkers changes it; a MaxQueue set here stays as set. Unbounded
	// and NoQueue are the special values. The (Workers+MaxQueue+1)-th concurrent submission
	// fails at once with ErrQueueFull. Workers + MaxQueue saturates at
	// math.MaxInt (MaxQueue is lowered to fit) rather than overflow.
	MaxQueue int
	// Isolation is the kind of worker; the zero value is InProcess.
	Isolation Isolation
	// IdleTimeout is how long a worker above MinWorkers waits for a task
	// before it exits. 0 means DefaultIdleTimeout; negative is invalid.
	IdleTimeout time.Duration
	// QueueDelay, when set, fails queued tasks that waited too long
	// instead of running them (see QueueDelay); in a Remote pool it also
	// bounds a task's wait for a node's free slot. The zero value
	// disables it: every accepted task runs.
	QueueDelay QueueDelay
	// SlowTaskAfter, when positive, reports a task still running that
	// long after its worker picked it up, once per task: as a
	// WorkerSlowTask event (logged at Warn and handed to OnWorkerEvent,
	// with the task's name, how long it has run and where) and in
	// Stats.Slow. The report comes between SlowTaskAfter and 1.25 times
	// it after the start. It is how a task that ignores its ctx, which
	// holds its worker until it returns, shows before the pool runs out
	// of workers. The time counts as Stats.OldestRunning does: with a
	// first task's worker process starting, or a Remote task's wait for
	// a node's free slot. One goroutine watches, only while tasks run.
	// 0 (the default) reports nothing; negative is invalid.
	SlowTaskAfter time.Duration

	// Subprocess configures the worker processes of an Isolation
	// Subprocess pool. It must be left zero for any other Isolation: New
	// refuses settings that would be silently ignored.
	Subprocess SubprocessOptions

	// Transport carries the tasks of a Remote pool to its worker nodes
	// (see package natsremote). Set, it makes the pool Remote: Isolation
	// may be left zero. It must be nil for a Subprocess pool.
	Transport Transport

	// Logger receives what the pool has to report: each WorkerEvent, at
	// the level its kind says, and for Subprocess each line a worker
	// process prints to stdout or stderr (at Info), tagged with the
	// worker's id and pid. nil means slog.Default().
	Logger *slog.Logger
	// OnWorkerEvent, if set, is called with each WorkerEvent, on the
	// pool's goroutines as it happens and outside the pool's lock. It
	// must return quickly, and must not wait for the pool (Shutdown).
	OnWorkerEvent func(WorkerEvent)

	// Tracer, if set, gives each task a span and, for a Subprocess or
	// Remote pool, sends the caller's trace context with the call, so that
	// the task continues the caller's trace where it runs (which must
	// extract it: see MainOptions). nil means no spans, and nothing is
	// sent. Package poolotel makes one.
	Tracer Tracer
}

// SubprocessOptions configures a Subprocess pool's worker processes. The
// zero value is valid: no grace, no recycling, no memory limit,
// DefaultMaxPayload, a 10 s start timeout, GOMAXPROCS 1 in each worker,
// the pool's own priority.
type SubprocessOptions struct {
	// TerminateGrace is how long a running task whose caller gave up (or
	// whose pool closed) gets to return, once its worker process has
	// cancelled the task's ctx, before the process is killed and replaced.
	// A task that returns within it keeps its process, which takes the next
	// task: with a grace, a task that honours its ctx costs no process
	// start when its caller times out. Meanwhile the worker stays busy, as
	// it would in process. 0 means no grace: kill at once. The caller never
	// waits for it: it gets ErrTerminated at once.
	TerminateGrace time.Duration
	// MaxTasksPerWorker replaces a worker process after it has served that
	// many tasks (a guard against leaks in task code). 0 means never.
	MaxTasksPerWorker int
	// MemoryLimit caps the memory of each worker process and of the
	// processes its tasks start, in bytes; the task under which a worker
	// breaks it fails with ErrWorkerCrashed naming the limit, and the worker
	// is replaced (its process group killed). 0 means no limit. What counts:
	// the worker's RSS, sampled every 5 ms; its descendants' proportional
	// set size (Pss: a page shared by n processes counts 1/n in each, so a
	// forked child's copy-on-write pages are not counted twice in full) and
	// the bytes of the memfds the worker and its descendants hold open
	// beyond what they map, both sampled every 100 ms (less often for a tree
	// so large that this would take over a tenth of a core). The limit is
	// enforced by those samples, not by the kernel: a burst of allocation
	// can overshoot it between two. What escapes: a descendant whose parent
	// died (a double fork) or that this process may not trace (setuid: its
	// RSS counts, not its memfds), files written to tmpfs and closed, the
	// unmapped part of a memfd that none of them holds open, and kernel
	// memory. The worker's GOMEMLIMIT is set to it too, so that its
	// collector works to stay under it first. Linux only: elsewhere a
	// MemoryLimit makes New fail with an error that matches
	// errors.ErrUnsupported, since no process's memory can be sampled there
	// without cgo.
	MemoryLimit int64
	// MaxPayload is the largest encoded input or output of a task, in
	// bytes; a larger one fails with ErrPayloadTooLarge before it is sent.
	// A moved *transfer.Buffer counts as its reference, not its length.
	// An input whose type can hold Buffers is encoded only as it is sent,
	// so its size fails the task after admission; if Buffers were moved
	// for it, the worker process is replaced (its Peer's books would no
	// longer match ours) and they are freed.
	// 0 means DefaultMaxPayload; at most MaxPayloadLimit.
	MaxPayload int
	// StartTimeout bounds a worker process's start, up to its handshake.
	// 0 means 10 s. After a failed start the pool waits before the next,
	// and fails tasks at once meanwhile (see ErrWorkerStartFailed).
	StartTimeout time.Duration
	// GOMAXPROCS is each worker process's GOMAXPROCS. A worker runs one
	// task at a time, so 0 means 1 (no idle Ps, fewer threads, and no
	// garbage collector spread over the cores the pool's other workers
	// need), unless the pool's own environment sets GOMAXPROCS, which
	// worker processes then inherit as it is. A task that runs goroutines
	// in parallel wants more: set it, or -1 for the Go runtime's default
	// (the CPUs the process may use). The worker starts with it in its
	// GOMAXPROCS variable, which Main puts back as the pool's environment
	// had it, for the task and the programs it starts.
	GOMAXPROCS int
	// Nice lowers the worker processes' CPU priority: it is added to the
	// nice value they inherit from the pool's process, as nice(1) does,
	// up to 19. With it, tasks in worker processes take the cores only
	// when the service's own goroutines (its request path) leave them
	// idle, as piscina's niceIncrement does for worker threads. 0 leaves
	// them at the pool's priority; 1..19 are allowed (raising a process's
	// priority needs privileges a pool should not assume). Each worker
	// applies it to all of its threads first thing in Main; the task's
	// children inherit it. Goroutines share their process's threads, so
	// an InProcess pool has no equivalent. For a Command, the pool sets it
	// on each of the program's threads once the program has said hello;
	// the threads it creates later inherit it.
	Nice int

	// Command, when set, is the program the worker processes run instead
	// of this binary, with its arguments (["python3", "worker.py"]): a
	// program of any language that speaks sdk/PROTOCOL.md, as the Python
	// and Node SDKs in sdk/ do. Such a pool runs the tasks declared with
	// Extern, and only those; every other option holds for it as for a
	// Go worker (TerminateGrace asks the program to stop the call, then
	// kills its process group; MemoryLimit counts the program and what it
	// starts), but GOMAXPROCS, which New refuses with a Command. The
	// program's stdout and stderr are logged line by line, and the tail
	// of its stderr is in the error of a call it died under. An
	// interpreter's start takes tens to hundreds of milliseconds (python3
	// importing its modules): set Options.MinWorkers so that no call waits
	// for one. As a worker node's pool (package natsremote), it serves the
	// program's tasks to Remote pools. ProgramTasks lists them.
	Command []string
	// Dir is the Command's working directory; "" means the pool's. Only
	// with a Command.
	Dir string
	// Env holds "KEY=value" entries added to the environment the
	// Command's processes inherit from the pool's (later entries win). It
	// adds to it, unlike exec.Cmd's Env, which replaces it. Only with a
	// Command.
	Env []string
}

// isZero reports whether s sets nothing.
func (s SubprocessOptions) isZero() bool {
	return s.TerminateGrace == 0 && s.MaxTasksPerWorker == 0 && s.MemoryLimit == 0 && s.MaxPayload == 0 &&
		s.StartTimeout == 0 && s.GOMAXPROCS == 0 && s.Nice == 0 && len(s.Command) == 0 && s.Dir == "" && len(s.Env) == 0
}

// clone is s with slices of its own, so that the pool's Options and its
// caller's never share an array.
func (s SubprocessOptions) clone() SubprocessOptions {
	s.Command = slices.Clone(s.Command)
	s.Env = slices.Clone(s.Env)
	return s
}

// Limits of SubprocessOptions.MaxPayload.
const (
	// DefaultMaxPayload is MaxPayload's default: 64 MiB.
	DefaultMaxPayload = 64 << 20
	// MaxPayloadLimit is the largest MaxPayload: the channel's frame limit
	// (1 GiB), less room for a call's header (16 KiB: its task name and
	// trace context).
	MaxPayloadLimit = 1<<30 - 16<<10
)

// DefaultWorkers is the number of workers a Pool gets when Options.Workers
// is 0: GOMAXPROCS-1, but at least 1.
func DefaultWorkers() int {
	return max(1, runtime.GOMAXPROCS(0)-1)
}

// Transport carries a Remote pool's tasks to its workers; package
// natsremote makes one, and New binds it to the new pool. It is sealed:
// its method takes types that only this module can name, so only this
// module's transports implement it. The seam (admission stays the pool's;
// a transport carries one call per worker, reports its workers' events,
// and decides what a cancel does where the task runs) is young and
// changes with each kind of worker; sealing keeps it free to, where a
// public interface would freeze it.
type Transport interface {
	Bind(bindEnv) (boundCarrier, error)
}

// bindEnv and boundCarrier name the seam's types in Transport's method
// without printing an internal package in go doc: unexported, so the
// interface stays sealed.
type (
	bindEnv      = seam.Env
	boundCarrier = seam.Carrier
)
