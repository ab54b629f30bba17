package natsjobs

import (
	"fmt"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/offloadgo/offload/pool"
)

// Options configure a Queue. Only Name is required; every other zero
// field takes the default it documents. Every process that opens a queue
// should give it the same Options: Open makes the streams and the
// buckets say what the last Open said, where its user may update them
// (see Open).
type Options struct {
	// Name names the queue: letters, digits, '-' and '_', not ending in
	// _DEAD or _SCHEDULED (another queue's streams end so).
	Name string
	// MaxJobs bounds the jobs waiting or retrying; past it Enqueue fails
	// at once with an error matching pool.ErrQueueFull. Dead jobs don't
	// count, nor delayed jobs until due (see At). 0 means 100,000.
	MaxJobs int
	// MaxBytes bounds the bytes those jobs take in the work stream (their
	// inputs, headers and subjects, as the server counts them); past it
	// Enqueue fails as past MaxJobs. 0 means 1 GiB.
	MaxBytes int64
	// MaxAttempts is how many attempts a job gets unless Enqueue says
	// otherwise (MaxAttempts). 0 means 5.
	MaxAttempts int
	// Backoff is the pause after a failed attempt (the attempt's number,
	// from 1, and its error) before the next. nil means exponential with
	// jitter: from 1 s doubling to 10 min, each pause drawn between half
	// and all of that.
	Backoff func(attempt int, err error) time.Duration
	// Timeout bounds each attempt unless Enqueue says otherwise
	// (Timeout): it becomes the deadline of the task's ctx. 0 means 30
	// minutes.
	Timeout time.Duration
	// Lease is how long a job taken by a worker that stopped
	// heartbeating (killed, paused, cut off) waits before another worker
	// gets it. A live worker renews it every Lease/3 however long the job
	// runs. 0 means 30 s.
	Lease time.Duration
	// Retention is how long a job's status and result, a dead job, and
	// an idempotency Key are kept after their last change. 0 means 24 h.
	Retention time.Duration
	// Replicas is how many servers keep each stream and bucket. 0
	// means 1.
	Replicas int

	// Logger hears of the jobs' events (see JobEvent) that this process
	// makes: its Enqueues, Retries and Cancels, and its Serves' unless
	// ServeOptions.Logger says otherwise. nil means slog.Default().
	Logger *slog.Logger
	// OnJobEvent, if set, is called with each JobEvent this process
	// makes, after Stats counts it, on the goroutine it happened on
	// (the caller's of Enqueue or Cancel, a Serve's for an attempt) and
	// under no lock. It must return quickly and must not panic.
	OnJobEvent func(JobEvent)
	// Tracer, if set, stores the trace context of Enqueue's ctx with the
	// job (as headers of its message, through the Tracer's Inject), and
	// gives it to the task's ctx when a Serve runs the job (Extract), so
	// that a task continues its enqueuer's trace wherever its pool runs
	// it (the pool's own Tracer carries it on to a worker process or a
	// node). A pool.JobTracer (poolotel's) also gives each Enqueue and
	// each attempt a span, the attempt's linked to the enqueue's. nil
	// means nothing is stored or read.
	Tracer pool.Tracer
}

const (
	defaultMaxJobs     = 100_000
	defaultMaxBytes    = 1 << 30
	defaultMaxAttempts = 5
	defaultTimeout     = 30 * time.Minute
	defaultLease       = 30 * time.Second
	minLease           = 10 * time.Millisecond
	defaultRetention   = 24 * time.Hour
)

// withDefaults fills o's zero fields, or says what is wrong with it.
func (o Options) withDefaults() (Options, error) {
	if err := checkQueueName(o.Name); err != nil {
		return o, err
	}
	if o.MaxJobs < 0 || o.MaxBytes < 0 || o.MaxAttempts < 0 || o.Timeout < 0 || o.Lease < 0 || o.Retention < 0 || o.Replicas < 0 {
		return o, fmt.Errorf("natsjobs: queue %q: negative option", o.Name)
	}
	set := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	setDuration := func(v *time.Duration, d time.Duration) {
		if *v == 0 {
			*v = d
		}
	}
	if o.Lease != 0 && o.Lease < minLease {
		return o, fmt.Errorf("natsjobs: queue %q: Lease %v is under %v", o.Name, o.Lease, minLease)
	}
	set(&o.MaxJobs, defaultMaxJobs)
	if o.MaxBytes == 0 {
		o.MaxBytes = defaultMaxBytes
	}
	set(&o.MaxAttempts, defaultMaxAttempts)
	set(&o.Replicas, 1)
	setDuration(&o.Timeout, defaultTimeout)
	setDuration(&o.Lease, defaultLease)
	setDuration(&o.Retention, defaultRetention)
	if o.Backoff == nil {
		o.Backoff = exponentialBackoff
	}
	return o, nil
}

// exponentialBackoff is the default Backoff.
func exponentialBackoff(attempt int, _ error) time.Duration {
	d := 10 * time.Minute
	if attempt >= 1 && attempt < 10 {
		d = min(d, time.Second<<(attempt-1))
	}
	return d/2 + rand.N(d/2+1)
}

// EnqueueOption changes one job's defaults (see Key, MaxAttempts,
// Timeout).
type EnqueueOption func(*enqueueOptions)

type enqueueOptions struct {
	key         string
	maxAttempts int
	timeout     time.Duration
	delay       time.Duration // Delay's; or
	at          time.Time     // At's
}

// Key makes Enqueue idempotent for the queue's Retention: while a job
// enqueued with key k is remembered, Enqueue with k again stores nothing
// and returns that job's id. "" means no key.
func Key(k string) EnqueueOption { return func(o *enqueueOptions) { o.key = k } }

// MaxAttempts gives the job n attempts instead of Options.MaxAttempts.
func MaxAttempts(n int) EnqueueOption { return func(o *enqueueOptions) { o.maxAttempts = n } }

// Timeout bounds each of the job's attempts to d instead of
// Options.Timeout.
func Timeout(d time.Duration) EnqueueOption { return func(o *enqueueOptions) { o.timeout = d } }

// Delay makes the job due d from now: it is Scheduled until then, and
// starts no sooner (see At for the rest). Delay(0) runs it now; a
// negative d fails Enqueue. The last Delay or At given wins.
func Delay(d time.Duration) EnqueueOption {
	return func(o *enqueueOptions) { o.delay, o.at = d, time.Time{} }
}

// At makes the job due at t (by the NATS server's clock, which fires
// it): it is Scheduled until then, and starts no sooner. A t not after
// now runs it now. A scheduled job survives a
// server restart, and Cancel ends it Canceled without its running.
// While Scheduled it does not count against MaxJobs or MaxBytes (it
// waits in a stream of its own); once due it enters the queue, and
// counts. A job that falls due while the queue holds MaxJobs jobs
// waits, Queued, until there is room, and enters within a few seconds
// of it (jobs enqueued meanwhile may take the room first); one that
// finds no room for Retention is dropped. The last Delay or At given
// wins.
func At(t time.Time) EnqueueOption {
	return func(o *enqueueOptions) { o.at, o.delay = t, 0 }
}

// ServeOptions configure Serve.
type ServeOptions struct {
	// Drain is how long running jobs may go on once Serve's ctx ends;
	// those still running then are cancelled and handed back, without
	// using an attempt, for another worker to run at once. 0 means none
	// may: they are handed back at once.
	Drain time.Duration
	// Logger hears of the events of the attempts Serve runs (see
	// JobEvent) and of what it drops: messages on the jobs' subjects
	// that are no job (at Warn). nil means the Queue's Options.Logger.
	Logger *slog.Logger
}
