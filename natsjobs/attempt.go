package natsjobs

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/offloadgo/offload/internal/codec"
	"github.com/offloadgo/offload/internal/registry"
	"github.com/offloadgo/offload/pool"
)

// attempt is one delivery of a job to a Serve: it claims the job (an
// attempt counted in its status record), runs it through the pool and
// settles its outcome, each write conditional on the revision the claim
// wrote, so that a worker that lost its lease can't overwrite the
// attempt that replaced it.
type attempt struct {
	s *server
	m jetstream.Msg

	id          ID
	task        string
	enqueued    time.Time
	maxAttempts int
	timeout     time.Duration
	// firstDelivery: the job's record most likely doesn't exist yet.
	firstDelivery bool

	rec  record        // as this attempt last wrote it
	rev  uint64        // its revision
	took time.Duration // how long the run took in the pool (events.go)

	ctx      context.Context // ends with the job's run: Cancel, a drain
	end      context.CancelCauseFunc
	slotOnce sync.Once
}

// Why an attempt's ctx ended, besides Cancel (ErrCanceled).
var (
	errDrained  = errors.New("natsjobs: the worker is stopping; the job is handed back")
	errTimedOut = errors.New("natsjobs: the attempt's Timeout passed")
)

const (
	// opTimeout bounds each exchange with the server while settling.
	opTimeout = 10 * time.Second
	// unknownTaskDelay is how long a job of a task this binary lacks is
	// left for other workers before this one sees it again;
	// unknownTaskGrace how long it may wait for one that has it.
	unknownTaskDelay = time.Second
	unknownTaskGrace = time.Hour
)

func newAttempt(s *server, m jetstream.Msg) *attempt {
	ctx, end := context.WithCancelCause(context.Background())
	return &attempt{s: s, m: m, ctx: ctx, end: end}
}

// handBack ends the run for a drain: the job goes back without using an
// attempt.
func (a *attempt) handBack() { a.end(errDrained) }

// freeSlot gives the job's slot back to Serve, once: when the pool frees
// it, or when the job never reached the pool.
func (a *attempt) freeSlot() { a.slotOnce.Do(func() { a.s.release(1) }) }

func (a *attempt) run() {
	defer a.end(nil)
	defer a.freeSlot()
	if err := a.parse(); err != nil {
		// Garbage on the jobs' subjects: never retried.
		a.s.log.Warn("natsjobs: dropped a message that is no job", "queue", a.s.q.o.Name, "subject", a.m.Subject(), "err", err)
		_ = a.m.TermWithReason(err.Error())
		return
	}
	e, ok := registry.Lookup(a.task)
	if !ok || e.Submit == nil {
		a.unknownTask()
		return
	}
	a.s.watchFor(a)
	defer a.s.unwatch(a)
	if !a.claim() {
		return
	}
	stop := make(chan struct{})
	var heartbeat sync.WaitGroup
	heartbeat.Add(1)
	go func() { defer heartbeat.Done(); a.heartbeat(stop) }()
	defer heartbeat.Wait()
	defer close(stop) // after settling: the lease holds until the ack

	traced, endSpan := a.traceRun(a.ctx)
	runCtx, cancel := context.WithTimeoutCause(traced, a.timeout, errTimedOut)
	defer cancel()
	decode := func(in any) error {
		if err := codec.Unmarshal(a.m.Data(), in); err != nil {
			return Permanent(fmt.Errorf("natsjobs: decode input of task %q: %w", a.task, err))
		}
		return nil
	}
	began := time.Now()
	wait, err := e.Submit(runCtx, a.s.p, decode, a.freeSlot)
	if errors.Is(err, pool.ErrQueueFull) || errors.Is(err, pool.ErrClosed) {
		endSpan(err)
		a.giveBack(busyWait) // p's slot went to another caller: not an attempt
		return
	}
	a.report(JobStarted, "")
	var out any
	if err == nil {
		out, err = wait()
	}
	a.took = time.Since(began)
	endSpan(err)
	a.settle(out, err, context.Cause(runCtx))
}

// parse reads the job from its message.
func (a *attempt) parse() error {
	a.id = ID(strings.TrimPrefix(a.m.Subject(), a.s.q.subject))
	if !validID(a.id) {
		return fmt.Errorf("natsjobs: a message on %q is no job", a.m.Subject())
	}
	h := a.m.Headers()
	a.task = h.Get(headerTask)
	if a.task == "" {
		return fmt.Errorf("natsjobs: job %s names no task", a.id)
	}
	a.maxAttempts, a.timeout = a.s.q.o.MaxAttempts, a.s.q.o.Timeout
	if v := h.Get(headerMaxAttempts); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return fmt.Errorf("natsjobs: job %s: bad %s %q", a.id, headerMaxAttempts, v)
		}
		a.maxAttempts = n
	}
	if v := h.Get(headerTimeout); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 1 {
			return fmt.Errorf("natsjobs: job %s: bad %s %q", a.id, headerTimeout, v)
		}
		a.timeout = time.Duration(n)
	}
	meta, err := a.m.Metadata()
	if err != nil {
		return fmt.Errorf("natsjobs: job %s: %w", a.id, err)
	}
	a.enqueued, a.firstDelivery = meta.Timestamp, meta.NumDelivered == 1
	return nil
}

// unknownTask leaves a job of a task this binary lacks for a worker that
// has it, without using an attempt, and buries it once none has for
// unknownTaskGrace.
func (a *attempt) unknownTask() {
	grace := a.s.q.unknownTaskGrace
	if time.Since(a.enqueued) < grace {
		_ = a.m.NakWithDelay(unknownTaskDelay)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	r, rev, err := a.s.q.record(ctx, a.id)
	if err != nil && !errors.Is(err, ErrNotFound) {
		_ = a.m.NakWithDelay(unknownTaskDelay)
		return
	}
	if err != nil {
		r = record{Task: a.task, Enqueued: a.enqueued}
	}
	a.rec, a.rev = r, rev
	a.bury(ctx, fmt.Sprintf("natsjobs: no worker had task %q for %v", a.task, grace))
}

// heartbeat renews the job's lease until stop closes.
func (a *attempt) heartbeat(stop <-chan struct{}) {
	t := time.NewTicker(a.s.q.o.Lease / 3)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			_ = a.m.InProgress()
		}
	}
}
