// Package pool runs registered tasks off the caller's goroutine on a bounded
// pool of workers: goroutines (InProcess, the default), re-executed copies
// of the program (Subprocess), or worker nodes on other machines (Remote,
// through a Transport such as package natsremote's), behind one API.
//
// Work is registered at package level with Register so that worker processes
// and nodes know it too. Extern declares instead a task that a program of
// another language serves (a Python script, a Node module: see sdk/): a
// Subprocess pool whose SubprocessOptions.Command is that program runs it
// in a pool of the program's processes, with the same supervision, its
// input and output crossing as JSON. A Pool admits at most Workers running plus MaxQueue waiting
// tasks; past that Submit and Run fail at once with ErrQueueFull, so a server
// can answer 503 instead of piling work up (see Shed and WriteError);
// Shed's MaxLag and Ready do the same when the whole process is saturated,
// and ShedCPU bounds handlers that do CPU-bound work themselves, in no
// pool, to the CPUs the process has; Ready sees those slots when they are
// made with NewCPUSlots and given to it.
// SetWorkers changes Workers while the pool runs, at once for admission:
// an auto MaxQueue (Workers²) follows it, running tasks finish, and tasks
// already queued beyond a lowered bound still run. RecycleWorkers puts a
// new process under each of a Subprocess pool's workers (a new worker
// program deployed, say), each up before the old one leaves after its
// current task.
//
// A *transfer.Buffer in a task's input or output moves instead of being
// copied: the sender's handle is detached once the call is admitted (a
// rejected call leaves it alone) and the receiver gets the same memory — a
// pointer in process; for Subprocess workers, the Buffer's own shared-memory
// segment, which the worker maps only while it holds the Buffer (a task
// reaches the Buffers its call carries, none of the caller's others; one a
// task returns becomes the caller's), so that moving 44 MiB there and back
// costs a fraction of a millisecond, not the milliseconds of copying it;
// to a Remote node its bytes are copied in the
// message, and the sender's handle is detached all the same. Input Buffers
// a task neither releases nor returns are released when it returns;
// Buffers the caller gets back are the caller's to Release.
// A worker process that dies takes none of the caller's memory with it: what
// it held is freed once it is reaped.
//
// The pool reads a caller's ctx once, on the caller's goroutine, as Run,
// Submit, SubmitBlocking or SubmitAll is called: Done and Deadline, and
// for a call it will watch (all but Run's) Value once, to find package
// context's cancellable ctx behind it. From then on it works from the Done
// channel and the deadline alone, and calls none of ctx's methods on a
// goroutine of its own, nor lets package context call them on one of its
// own: a ctx whose methods panic panics in its caller, one whose methods
// block blocks its caller, and neither reaches the pool or the process.
// A call whose ctx ends fails with context.DeadlineExceeded once ctx's
// deadline has passed, context.Canceled otherwise: what ctx.Err reports
// under Context's contract, told without calling it.
//
// What of a caller's ctx a task sees depends on where it runs. In process
// (InProcess) the task gets a ctx of the pool's own with the caller's
// values, its deadline as read at the call, and its end: cancelled when
// the caller's ctx ends (or the pool closes), with the cause
// (context.Canceled, context.DeadlineExceeded or ErrClosed). A task that
// asks it for a value asks the caller's ctx, on the task's goroutine: a
// panic there is the task's, a *PanicError. In a worker process (Subprocess) or on a
// node (Remote) the task gets a ctx of that side's own, and only the end
// of the caller's crosses: it is cancelled when the caller's ctx ends, by
// cancellation or at its deadline, with the cause (context.Canceled,
// context.DeadlineExceeded or ErrClosed). A node also gets the deadline
// itself, so that ctx.Deadline reports it and the task ends then even if
// the cancel is lost; in a worker process ctx.Deadline reports none. When
// the pool has a Tracer and the worker side was given one (MainOptions),
// the trace context crosses too: for poolotel's, the W3C traceparent and
// tracestate, and the baggage. No other value crosses: a logger, a request
// ID or an auth token in the caller's ctx is not there; put what the task
// needs in its input, or in the baggage.
//
// A caller that gives up on a running task (its ctx ends, or Close) has
// its answer at once, but the task's worker stays busy until the task has
// returned, or been killed: in process, a task that ignores its ctx holds
// its goroutine until it returns. A Subprocess caller's error matches
// ErrTerminated as well as its ctx's error; the worker process cancels the
// task's ctx, and a task that returns within TerminateGrace keeps its
// process, which takes the next task (its late result goes to nobody),
// while one that does not is killed, counted in Stats.Terminated, and
// replaced. A Remote caller's error matches ErrTerminated too; its node
// is told to cancel the task, which it does as its own pool does (counted
// in Stats.CanceledOnNode here). Queued tasks are untouched either way.
//
// Every task runs under the pprof labels task=NAME and isolation=KIND (in
// its worker process, for Subprocess), and goroutines it starts inherit
// them, so a CPU profile attributes time to tasks:
// go tool pprof -tagfocus task=resize. It costs about 12 ns a task and
// no allocation (the README has the benchmark). A task that calls
// pprof.Do with its ctx gets Do's labels only, not the pool's.
package pool
