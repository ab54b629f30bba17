package pool

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/offloadgo/offload/internal/registry"
	"github.com/offloadgo/offload/internal/seam"
)

// Pool runs registered tasks on a bounded set of workers. Create it with
// New; the zero value is not usable. A Pool is safe for concurrent use.
type Pool struct {
	// opts is guarded by mu where SetWorkers changes it (see settings);
	// maxWorkers and maxInflight mirror opts.Workers and opts.capacity for
	// the readers that don't take mu (see capacity.go).
	opts                    settings
	maxWorkers, maxInflight atomic.Int64
	// resizing serializes SetWorkers calls, so that the transport hears
	// of each new Workers in the order they took effect.
	resizing sync.Mutex
	// recycling holds one token while RecycleWorkers runs: calls run one
	// after another, and a waiting one can give up when its ctx ends.
	recycling chan struct{}

	mu       sync.Mutex
	queue    fifo
	idle     []*worker            // parked workers, most recently parked last
	all      map[*worker]struct{} // every live worker
	starting int                  // workers spawned that have not yet run
	exiting  int                  // workers told to exit (reaper, SetWorkers) that have not yet exited
	inflight int                  // accepted and not yet finished: queued + running
	busy     int                  // workers running a task
	waiters  waitList             // SubmitBlocking callers waiting for room
	state    state
	drained  chan struct{} // closed when no longer open and nothing is left
	reaping  bool          // the idle reaper goroutine is running
	tick     uint64        // the reaper's clock, in quarters of IdleTimeout
	spawned  int           // workers started so far, to number them
	// clock times the tasks and workers; it never changes after New.
	clock monoclock
	// lastEmpty is when a worker last found the queue empty or emptied it
	// (a clock reading), for QueueDelay.
	lastEmpty int64
	// watchingSlow says the slow-task watcher runs (see slowtask.go).
	watchingSlow bool
	// watchingLag says a Shed or Ready keeps the process's lag sampled
	// while the pool is open (see lag.go).
	watchingLag atomic.Bool

	// events logs and hooks what happens to the workers (see events.go).
	events poolEvents

	// transport carries tasks to worker processes; nil for InProcess.
	transport seam.Carrier
	// slots counts the transport's live slots, if it does (Remote): see
	// capacity.go. nil otherwise.
	slots seam.SlotCounter

	// stop ends the contexts of running tasks whose caller's ctx never
	// ends; Close cancels it.
	stop       context.Context
	cancelStop context.CancelCauseFunc

	workersWG sync.WaitGroup
	stats     recorder

	// calls recycles Run's calls: one sync.Pool per task registered
	// before New, by registry index, and closureCalls per Closures name
	// and Out type, by its definition (see recycled).
	calls        []sync.Pool
	closureCalls sync.Map
}

type state int

const (
	open     state = iota
	draining       // Shutdown called: no intake, queued and running work goes on
	closed         // Close called, or Shutdown's ctx ended
)

// New returns a Pool configured by opts, with MinWorkers already started.
// It returns an error for an invalid Options.
func New(opts Options) (*Pool, error) {
	s, err := opts.fillDefaults()
	if err != nil {
		return nil, err
	}
	p := &Pool{
		opts:      s,
		all:       make(map[*worker]struct{}),
		drained:   make(chan struct{}),
		recycling: make(chan struct{}, 1),
		clock:     newMonoclock(),
		calls:     make([]sync.Pool, registry.Len()),
	}
	p.lastEmpty = p.clock.now() // a new queue is empty
	p.setLimits()
	p.events = poolEvents{pool: p, stats: &p.stats, logger: s.Logger, hook: s.OnWorkerEvent}
	if p.events.logger == nil {
		p.events.logger = slog.Default()
	}
	p.stop, p.cancelStop = context.WithCancelCause(context.Background())
	if p.transport, err = p.bindTransport(); err != nil {
		p.cancelStop(nil)
		return nil, err
	}
	p.mu.Lock()
	// Under the lock: the transport may already tell of more slots
	// (grantRoom), which reads p.slots under it.
	p.slots, _ = p.transport.(seam.SlotCounter)
	for range s.MinWorkers {
		p.spawn()
	}
	p.mu.Unlock()
	return p, nil
}

// Options returns the pool's configuration with every default filled in
// (the zero Options for a Pool not made by New): Workers, MinWorkers and
// an auto MaxQueue as SetWorkers last set them.
func (p *Pool) Options() Options {
	if p.usable() != nil {
		return Options{}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	o := p.opts.Options
	o.Subprocess = o.Subprocess.clone() // the caller's to change
	return o
}

// Run submits in to task and waits for its result. It fails at once with
// ErrQueueFull when the pool is at capacity and with ErrClosed after
// Shutdown or Close. The task's ctx ends when ctx does (the package doc
// says what else of ctx it sees, and what the pool reads of ctx, when: a
// panic in ctx's methods is Run's caller's own); when ctx ends, Run
// returns at once:
// with ctx's error if the task was still queued (it then never runs); if it
// was running, InProcess with ctx's error (the goroutine goes on until the
// task returns, keeping its worker busy), Subprocess with an error matching
// both ErrTerminated and ctx's error (the task's ctx is cancelled in its
// worker process, which stays busy until the task returns, and is killed
// and replaced if that takes longer than TerminateGrace), Remote with the
// same error (its node is told to cancel the task: see package
// natsremote).
func Run[In, Out any](ctx context.Context, p *Pool, task Task[In, Out], in In) (Out, error) {
	c := reuseCall(ctx, p, task, in)
	if err := p.admit(c, admitNow); err != nil {
		var zero Out
		return zero, err // c is dropped by admit
	}
	// The call's end, read at admission: Run calls ctx's methods no more.
	if done := c.end.done; done == nil {
		<-c.signal // a plain receive is cheaper than a select
	} else {
		select {
		case <-c.signal:
		case <-done:
			p.abandon(c, c.end.err())
			<-c.signal // resolved now, by us or by the worker that beat us
		}
	}
	out, err := c.out, c.err
	c.drop()
	return out, err
}

// Submit accepts in for task and returns its Future without waiting for a
// worker. It fails at once with ErrQueueFull when the pool is at capacity,
// and with ErrClosed after Shutdown or Close; a rejected task never runs.
// When ctx ends before the task finishes, the Future resolves with ctx's
// error at once and, if the task was still queued, its slot is freed.
func Submit[In, Out any](ctx context.Context, p *Pool, task Task[In, Out], in In) (*Future[Out], error) {
	c := newCall(ctx, task, in)
	if err := p.admit(c, admitNow|admitWatch); err != nil {
		return nil, err
	}
	return &c.Future, nil
}

// SubmitBlocking is Submit for batch producers: instead of failing with
// ErrQueueFull it blocks until the pool has room or ctx ends (returning
// ctx's error). Blocked callers get room in the order they arrived, as
// tasks end, as SetWorkers raises the capacity, or as a Remote pool's
// nodes come to offer more slots. It still fails at once with ErrClosed
// after Shutdown or Close.
func SubmitBlocking[In, Out any](ctx context.Context, p *Pool, task Task[In, Out], in In) (*Future[Out], error) {
	c := newCall(ctx, task, in)
	if err := p.admit(c, admitWait|admitWatch); err != nil {
		return nil, err
	}
	return &c.Future, nil
}
