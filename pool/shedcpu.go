package pool

import (
	"net/http"
	"time"
)

// CPUOptions configures ShedCPU. The zero value runs one wrapped handler
// a CPU at once (at most GOMAXPROCS) and lets as many more wait.
type CPUOptions struct {
	// MaxRunning is how many of the wrapped handlers run at once. 0
	// means the smaller of runtime.GOMAXPROCS(0) and runtime.NumCPU(),
	// as ShedCPU is called: one handler a CPU, so that CPU-bound
	// handlers keep every CPU busy and none waits for another's
	// preemption slice. In a container whose CPU limit is below the
	// machine's CPUs, set it to the limit if GOMAXPROCS is set above it.
	MaxRunning int

	// MaxQueue is how many more requests may wait for a running handler
	// to finish. A waiting request is parked: it takes no CPU and leaves
	// the scheduler's queues alone. 0 means MaxRunning; NoQueue means
	// none, so that a request finding every slot taken is shed at once.
	// Requests wait in arrival order. The queue is what keeps the CPUs
	// busy when arrivals bunch up and then pause: with random (Poisson)
	// arrivals at twice what 2 CPUs can do, no queue keeps them busy
	// about 77% of the time, a queue of 2 about 95% (Erlang's formulas),
	// at the price of a wait of up to MaxQueue/MaxRunning handlers' run
	// time.
	MaxQueue int

	// RetryAfter is the Retry-After of a shed request, rounded up to
	// whole seconds. 0 means DefaultMinRetryAfter (1 s).
	RetryAfter time.Duration

	// OnShed, as ShedOptions.OnShed: called on the request's goroutine
	// for every request turned away, before the 503 is written; it must
	// not write to the response. ShedCPU counts nothing itself: count
	// here.
	OnShed func(r *http.Request, reason ShedReason)
}

// ShedCPU returns HTTP middleware for handlers that do CPU-bound work
// themselves, on the request's goroutine and in no pool: it runs at most
// opts.MaxRunning of them at once, lets up to opts.MaxQueue more wait,
// parked, for one to finish, and answers 503 Service Unavailable with
// Retry-After to the rest before the handler runs (reason ShedQueueFull).
// A waiting request whose ctx ends (its client gone, or its deadline
// passed) leaves the queue and is answered 503 too (ShedDeadline), its
// handler never started; one admitted runs to its end.
//
// It answers what Shed's MaxLag can only see late: the process's
// scheduling latency grows once more CPU-bound goroutines are runnable
// than there are CPUs, and a latency sampled over a window shows that
// only after a backlog has built, and keeps showing it after the backlog
// has drained. ShedCPU counts its own handlers instead, at each arrival
// and each end, so it never lets such a backlog build: at most
// MaxRunning handlers compete for the CPUs, and the others wait without
// taking a turn.
//
// Requests it does not wrap still wait while every P runs a wrapped
// handler: up to the runtime's 10 ms preemption slice, plus up to 10 ms
// until the runtime polls the network when no P is idle (in the lab, /fast
// p99 46 ms against 1.56 ms idle). Give them a P of their own: run the
// process with GOMAXPROCS one above its CPUs (GOMAXPROCS=3 on 2 CPUs)
// and leave MaxRunning at the CPUs (the default does): the spare P polls
// the network and runs them at once, and the operating system shares the
// CPUs among the threads at a finer grain than the runtime's slice (in the
// lab, /fast p99 6.6 ms, and 9.0 of 10 jobs/s done against 7.5). Or have the handlers
// yield (package budget). CPU work ShedCPU does not wrap (other handlers,
// pools sized to the CPUs) still saturates the process: Shed's MaxLag and
// Ready see that. Ready sees the slots themselves only when given them:
// ShedCPU(opts) is NewCPUSlots(opts).Shed, so make the slots with
// NewCPUSlots, wrap the handlers with their Shed, and list them in
// ReadyOptions.CPU.
//
// A request pays two atomic adds and a send and receive on a buffered
// channel: about 75 ns, 150 ns with every P at it (BenchmarkShedCPU,
// BenchmarkShedCPUParallel), no allocation. The middleware is safe for
// concurrent use; the handlers one ShedCPU wraps share one set of slots.
func ShedCPU(opts CPUOptions) func(http.Handler) http.Handler {
	return NewCPUSlots(opts).Shed
}
