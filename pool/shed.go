package pool

import (
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// ShedReason says why Shed turned a request away.
type ShedReason int

const (
	// ShedClosed: the pool is shutting down or closed.
	ShedClosed ShedReason = iota + 1
	// ShedQueueFull: every admission slot (Workers + MaxQueue, or
	// ShedCPU's MaxRunning + MaxQueue) is taken.
	ShedQueueFull
	// ShedMaxWait: the predicted wait for a worker exceeds ShedOptions.MaxWait.
	ShedMaxWait
	// ShedDeadline: the predicted wait ends past the request's ctx
	// deadline; for ShedCPU, the request's ctx ended while it waited.
	ShedDeadline
	// ShedNoNode: a Remote pool has no live worker node to run the task.
	ShedNoNode
	// ShedLag: the process's recent scheduling latency passed
	// ShedOptions.MaxLag.
	ShedLag
)

func (r ShedReason) String() string {
	switch r {
	case ShedClosed:
		return "closed"
	case ShedQueueFull:
		return "queue full"
	case ShedMaxWait:
		return "max wait"
	case ShedDeadline:
		return "deadline"
	case ShedNoNode:
		return "no node"
	case ShedLag:
		return "lag"
	}
	return fmt.Sprintf("ShedReason(%d)", int(r))
}

// Bounds of the Retry-After header when ShedOptions leaves them zero.
const (
	DefaultMinRetryAfter = time.Second
	DefaultMaxRetryAfter = 60 * time.Second
)

// ShedOptions configures Shed. The zero value sheds only when the pool is
// closed, when its queue is full, and when a request's deadline would pass
// before its task could start; never on the process's lag.
type ShedOptions struct {
	// MaxWait is the longest predicted queue wait at which a request is
	// still admitted. 0 means no wait-based shedding: the queue bound alone
	// (MaxQueue) limits the wait. Prediction needs the pool's recent run
	// time (Load.RecentRunTime): until a task has finished, it takes how
	// long the first one has run, which errs short. MaxWait bounds the
	// predicted wait, not the wait: requests that arrive together see the
	// same load, and run times vary around their average, so an admitted
	// task may wait longer; QueueDelay fails the ones that do. A Remote
	// pool predicts from its own queue and the slots its live nodes
	// advertise: nodes that other pools (another replica of the service,
	// say) use too give it a slot less often, and its tasks wait for one
	// longer than predicted.
	MaxWait time.Duration

	// MinRetryAfter and MaxRetryAfter clamp the Retry-After header, which
	// is the predicted time for the pool to drain the work it holds,
	// rounded up to whole seconds. 0 means DefaultMinRetryAfter (1 s) and
	// DefaultMaxRetryAfter (60 s).
	MinRetryAfter, MaxRetryAfter time.Duration

	// MaxLag is the process's recent scheduling latency past which
	// requests are shed: the 99th percentile, over the last half second,
	// of how long the process's runnable goroutines waited for a CPU (a
	// P; see SchedLatency). Past it every CPU is taken, by this pool's
	// callers or by anything else in the process, and a new request
	// would only wait its turn and slow every other. Once shedding on
	// lag, Shed goes on until the recent lag is back to MaxLag/2 or
	// less, so it does not flap: as the backlog drains, the half-second
	// window forgets the worst waits and requests are admitted again.
	// The Retry-After of a request shed on lag is MinRetryAfter. 0 means
	// no lag-based shedding.
	//
	// Set it well above 10 ms: while CPU-bound goroutines hold every P,
	// any other waits up to the runtime's 10 ms preemption slice, so a
	// process that merely uses all its CPUs lags about that much. Lower
	// values keep other requests' latency lower and shed more of the
	// CPU-bound work, idling CPUs; the README's lab rows compare 20 and
	// 50 ms.
	//
	// The lag shows a backlog only once it has built, and for the
	// window's length after it has drained: a process shedding on lag
	// lets too much CPU-bound work in at first, then sheds while its
	// CPUs idle. For handlers that do their CPU work themselves, ShedCPU
	// bounds them as they arrive and end; MaxLag is the guard for what
	// nothing bounds (other handlers, GC, cgo).
	//
	// A background goroutine, one per process however many pools and
	// Sheds use it, reads the runtime's histogram every 100 ms while a
	// pool given a MaxLag is open: about 230 ns and no allocation a read
	// (BenchmarkLagSample), 2.3 µs of CPU a second plus the goroutine's
	// ten wakeups. A request pays two atomic loads, about 3 ns
	// (BenchmarkLagGate).
	MaxLag time.Duration

	// OnShed, when set, is called on the request's goroutine for every
	// request Shed turns away, before the 503 is written: log it there,
	// quickly (Stats.Shed counts them already, by reason). It must not
	// write to the response.
	OnShed func(r *http.Request, reason ShedReason)
}

// Shed returns HTTP middleware that answers 503 Service Unavailable, with a
// Retry-After header and a short text body, before the wrapped handler runs
// whenever p can't take the request's work in time, or (with MaxLag) the
// process's CPUs can't. The checks, cheapest first:
//
//  1. p is closed (Shutdown or Close was called);
//  2. the process lags: its recent scheduling latency passed opts.MaxLag
//     (if set);
//  3. p is a Remote pool with no live worker node;
//  4. p is at capacity: Workers running plus MaxQueue waiting;
//  5. the wait predicted for a new task exceeds opts.MaxWait (if set);
//  6. the request's ctx has a deadline and the predicted wait ends past it.
//
// Check 6 sees a deadline set before the middleware runs: give a request
// its timeout in a handler around Shed's (context.WithTimeout, then
// r.WithContext), not inside the handler Shed wraps.
//
// The predicted wait is the work that must finish before a worker is free
// for the new task, at the pool's recent average run time: when every
// worker is taken, (InFlight − Workers + 1) × RecentRunTime ÷ Workers. It
// counts running tasks as if they had just started, so it errs towards
// shedding: with steady run times an admitted task waits at most MaxWait.
// The deadline check compares the wait alone, not wait plus run time: the
// run time is the pool's average over all its tasks, not this request's.
//
// The decision reads p.Load (a few atomic loads, no lock, no allocation)
// and, only for a request with a deadline, the clock. Admission is not
// reserved: requests that pass together may still find the pool full, so
// the handler must handle ErrQueueFull from Run; WriteError does.
//
// The handler gets a ResponseWriter wrapped to remember whether the
// response has started, so that WriteError never writes twice. The wrapper
// keeps Flush and, through Unwrap, everything http.ResponseController
// offers; other optional interfaces (http.Hijacker, io.ReaderFrom) are
// reachable only through http.ResponseController.
//
// The middleware is safe for concurrent use, and keeps answering 503 after
// p is closed. Shed panics if p is nil, a mistake found at start-up; a
// Pool not made by New reads as closed, so every request is shed.
func Shed(p *Pool, opts ShedOptions) func(http.Handler) http.Handler {
	return shedOn(p, opts, processLag)
}

// shedOn is Shed with the lag read from lag.
func shedOn(p *Pool, opts ShedOptions, lag lagSource) func(http.Handler) http.Handler {
	s := newShedder(p, opts)
	if opts.MaxLag > 0 {
		s.lag = &lagGate{src: lag, max: opts.MaxLag}
		p.watchLag(lag)
	}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if reason, retry := s.check(r); reason != 0 {
				s.reject(w, r, reason, retry)
				return
			}
			next.ServeHTTP(&shedWriter{ResponseWriter: w, shed: s}, r)
		})
	}
}

// shedder is Shed's configuration with its defaults filled in.
type shedder struct {
	pool     *Pool
	maxWait  time.Duration
	minRetry time.Duration
	maxRetry time.Duration
	onShed   func(*http.Request, ShedReason)
	lag      *lagGate // nil without MaxLag
}

func newShedder(p *Pool, opts ShedOptions) *shedder {
	if p == nil {
		panic("pool: Shed of a nil *Pool")
	}
	s := &shedder{
		pool:     p,
		maxWait:  max(0, opts.MaxWait),
		minRetry: opts.MinRetryAfter,
		maxRetry: opts.MaxRetryAfter,
		onShed:   opts.OnShed,
	}
	if s.minRetry <= 0 {
		s.minRetry = DefaultMinRetryAfter
	}
	if s.maxRetry <= 0 {
		s.maxRetry = DefaultMaxRetryAfter
	}
	s.maxRetry = max(s.maxRetry, s.minRetry)
	return s
}

// check decides whether r must be shed, and if so for how many seconds the
// client should stay away. 0 means admit.
func (s *shedder) check(r *http.Request) (ShedReason, int) {
	l := s.pool.Load()
	if !l.Closed && s.lag != nil && s.lag.over() {
		return ShedLag, s.wholeSeconds(s.minRetry)
	}
	var left time.Duration
	deadline, hasDeadline := r.Context().Deadline()
	if hasDeadline {
		left = time.Until(deadline) // the only clock read, and only when needed
	}
	if reason := s.decide(l, left, hasDeadline); reason != 0 {
		return reason, s.retryAfter(l)
	}
	return 0, 0
}

// decide is the shed decision on one reading of the pool's load. left is
// the time to the request's deadline, looked at only when hasDeadline.
func (s *shedder) decide(l Load, left time.Duration, hasDeadline bool) ShedReason {
	switch {
	case l.Closed:
		return ShedClosed
	case l.MaxWorkers == 0:
		return ShedNoNode // only a Remote pool's limit is ever 0
	case l.Capacity >= 0 && l.InFlight >= l.Capacity:
		return ShedQueueFull
	}
	workers := s.workersOf(l)
	if l.InFlight < workers && (!hasDeadline || left > 0) {
		return 0 // a worker is free (or can be started): no wait
	}
	wait := s.predictWait(l, workers)
	switch {
	case s.maxWait > 0 && wait > s.maxWait:
		return ShedMaxWait
	case hasDeadline && wait >= left:
		return ShedDeadline
	}
	return 0
}

// workersOf is how many tasks the pool runs at once, for the predictions:
// Load.MaxWorkers, the configured maximum as SetWorkers last set it (a new
// task may start a worker up to it), or, for a Remote pool, what its live
// nodes offer now.
func (s *shedder) workersOf(l Load) int { return max(1, l.MaxWorkers) }

// predictWait is the time until one of workers is free for a task
// submitted now.
func (s *shedder) predictWait(l Load, workers int) time.Duration {
	ahead := l.InFlight - workers + 1
	if ahead <= 0 || l.RecentRunTime <= 0 {
		return 0
	}
	return time.Duration(int64(ahead) * int64(l.RecentRunTime) / int64(workers))
}

// retryAfter is the whole seconds the pool needs to drain what it holds,
// clamped to the configured range.
func (s *shedder) retryAfter(l Load) int {
	drain := time.Duration(int64(max(0, l.InFlight)) * int64(l.RecentRunTime) / int64(s.workersOf(l)))
	return s.wholeSeconds(min(max(drain, s.minRetry), s.maxRetry))
}

// wholeSeconds is d rounded up to whole seconds, for Retry-After.
func (s *shedder) wholeSeconds(d time.Duration) int {
	return int((d + time.Second - 1) / time.Second)
}

func (s *shedder) reject(w http.ResponseWriter, r *http.Request, reason ShedReason, retry int) {
	s.pool.stats.shed[reason].Add(1) // Stats.Shed; reason is one of decide's
	if s.onShed != nil {
		s.onShed(r, reason)
	}
	w.Header().Set("Retry-After", strconv.Itoa(retry))
	body := "pool: overloaded (" + reason.String() + "), retry later"
	switch reason {
	case ShedNoNode:
		body = "pool: no worker node is live (" + reason.String() + "), retry later"
	case ShedLag:
		body = "pool: overloaded (" + reason.String() + ": every CPU is taken), retry later"
	}
	http.Error(w, body, http.StatusServiceUnavailable)
}

// shedWriter is the ResponseWriter Shed's handler gets: it records whether
// the response has started, for WriteError.
type shedWriter struct {
	http.ResponseWriter
	shed    *shedder
	written bool
}

func (w *shedWriter) WriteHeader(code int) {
	if code >= 200 { // 1xx informational responses don't start the response
		w.written = true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *shedWriter) Write(b []byte) (int, error) {
	w.written = true
	return w.ResponseWriter.Write(b)
}

// Flush keeps http.Flusher working through the wrapper; flushing starts
// the response.
func (w *shedWriter) Flush() { _ = w.FlushError() }

// FlushError is what http.ResponseController.Flush calls.
func (w *shedWriter) FlushError() error {
	w.written = true
	return http.NewResponseController(w.ResponseWriter).Flush()
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *shedWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
