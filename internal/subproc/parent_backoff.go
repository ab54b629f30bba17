package subproc

import (
	"fmt"
	"sync"
	"time"
)

// The backoff after failed starts. The first wait is short, so that a
// failure that the next start may not repeat (a fork refused under load)
// refuses calls for a tenth of a second only; doubling reaches the cap
// after six failures in a row, about 6 s of refusals in all. The cap
// bounds how long a fixed program waits to be tried again, and what one
// that cannot start costs: a process start every 5 s, whatever the load.
const (
	firstStartBackoff = 100 * time.Millisecond
	maxStartBackoff   = 5 * time.Second
)

// startBackoff spaces out the starts of a carrier's worker processes after
// failed ones, so that a program that cannot start costs a process start
// per backoff, not one per call, and its calls fail at once meanwhile.
//
// After a start fails, none is claimed until the backoff has passed:
// firstStartBackoff after the first failure, doubling with each failure in
// a row up to maxStartBackoff. A claim meanwhile gets the last start's
// error (see refusal). Once the backoff has passed, one start is claimed
// (the probe) and the others are refused while it runs: if it comes up,
// or any start does, the backoff ends; if it fails, the next is longer.
// A start cut short by the pool's end settles nothing.
//
// The carrier's runners share one: they all start the same program with
// the same spec, so one's failure foretells the others'. One each would
// spawn a process per worker per backoff: the same storm, Workers times
// smaller. Starts claimed before an outcome was recorded overlapped it and
// count once, so that Workers processes failing at a warm-up are one
// failure, not Workers doublings.
//
// Renew's starts (RecycleWorkers) are not claimed: an operator who has
// deployed a fix gets a start at once. One that comes up ends the
// backoff; one that fails arms none, since the old processes serve on.
//
// Safe for concurrent use; make one with newStartBackoff.
type startBackoff struct {
	first, max time.Duration
	now        func() time.Time  // time.Now, or a test's clock
	failed     func(error) error // a failed start's error as its call gets it

	mu       sync.Mutex
	failures int       // starts failed in a row; 0: starts are free
	last     error     // the last failure's error, from workerproc.Start
	lastAt   time.Time // when it was recorded
	retryAt  time.Time // no start is claimed before, while failures > 0
	outcomes uint64    // outcomes recorded so far
	tickets  uint64    // tickets handed out so far
	probe    uint64    // the ticket of the probe while it runs; 0 for none
}

// startTicket is a claimed start: its id, and the outcomes recorded when
// it was claimed.
type startTicket struct{ id, outcomes uint64 }

func newStartBackoff(failed func(error) error) *startBackoff {
	return &startBackoff{first: firstStartBackoff, max: maxStartBackoff, now: time.Now, failed: failed}
}

// claim returns a ticket for a start now, or the error of a call that
// must not wait for one: it matches ErrWorkerStartFailed and says so.
func (b *startBackoff) claim() (startTicket, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.tickets++
	t := startTicket{id: b.tickets, outcomes: b.outcomes}
	if b.failures == 0 {
		return t, nil
	}
	now := b.now()
	switch {
	case b.probe != 0:
		return startTicket{}, b.refusal(now, "the next start is being tried now")
	case now.Before(b.retryAt):
		return startTicket{}, b.refusal(now, fmt.Sprintf("the next start is tried in %v", roundWait(b.retryAt.Sub(now))))
	}
	b.probe = t.id
	return t, nil
}

// refusal is the error of a call refused during the backoff: the last
// start's failure, as its own call got it, and when the next start comes.
// b.mu is held.
func (b *startBackoff) refusal(now time.Time, next string) error {
	return fmt.Errorf("%w [no process was started for this call: this is the last start's failure, %v ago, %d in a row; %s]",
		b.failed(b.last), roundWait(now.Sub(b.lastAt)), b.failures, next)
}

// settle records how t's start ended: err is nil if its process came up;
// cut says the pool's end cut it short, which proves nothing.
func (b *startBackoff) settle(t startTicket, err error, cut bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.probe == t.id {
		b.probe = 0
	}
	switch {
	case cut:
	case err == nil:
		b.endLocked()
	case t.outcomes != b.outcomes: // overlapped a recorded outcome: not one more in a row
		if b.failures > 0 {
			b.last, b.lastAt = err, b.now()
		}
	default:
		b.outcomes++
		b.failures++
		b.last, b.lastAt = err, b.now()
		b.retryAt = b.lastAt.Add(b.wait())
	}
}

// reset ends the backoff: a start that was not claimed (Renew's) came up.
func (b *startBackoff) reset() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.endLocked()
}

func (b *startBackoff) endLocked() {
	b.outcomes++
	b.failures, b.last = 0, nil
}

// wait is the backoff after b.failures failures in a row. b.mu is held.
func (b *startBackoff) wait() time.Duration {
	d := b.first
	for i := 1; i < b.failures && d < b.max; i++ {
		d *= 2
	}
	return min(d, b.max)
}

// roundWait rounds d for an error message, as a person reads it: to the
// millisecond, or the microsecond under one.
func roundWait(d time.Duration) time.Duration {
	if d < time.Millisecond {
		return d.Round(time.Microsecond)
	}
	return d.Round(time.Millisecond)
}
