package subproc

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/cancel"
	"github.com/offloadgo/offload/internal/seam"
	"github.com/offloadgo/offload/internal/testkit"
)

// The backoff doubles from its first wait to its cap with each failure in
// a row; until it has passed, claims get the last failure, saying when the
// next start comes; then one start is tried at a time, and a start that
// comes up ends it.
func TestStartBackoffWaits(t *testing.T) {
	clock := newFakeClock()
	b := newStartBackoff((&ProcessCarrier{}).startFailed)
	b.now = clock.read
	exited := errors.New("worker exited")
	waits := []time.Duration{100, 200, 400, 800, 1600, 3200, 5000, 5000}
	for i, wait := range waits {
		ticket, err := b.claim()
		require.NoError(t, err, "failure %d", i)
		b.settle(ticket, exited, false)
		_, err = b.claim()
		require.ErrorIs(t, err, seam.ErrWorkerStartFailed)
		require.ErrorIs(t, err, exited)
		want := wait * time.Millisecond
		assert.ErrorContains(t, err, fmt.Sprintf("%d in a row; the next start is tried in %v]", i+1, want))
		clock.advance(want - time.Millisecond)
		_, err = b.claim()
		require.ErrorContains(t, err, "the next start is tried in 1ms]")
		clock.advance(time.Millisecond)
	}
	probe, err := b.claim()
	require.NoError(t, err)
	_, err = b.claim()
	require.ErrorContains(t, err, "the next start is being tried now]", "one start at a time after a backoff")
	b.settle(probe, nil, false)
	for range 3 {
		_, err := b.claim()
		require.NoError(t, err, "a start came up: starts are free again")
	}
}

// Starts that overlap count once (Workers processes failing at a warm-up
// are one failure); a start cut short by the pool's end proves nothing;
// a start that came up without a claim (Renew's) ends the backoff.
func TestStartBackoffCounts(t *testing.T) {
	clock := newFakeClock()
	b := newStartBackoff((&ProcessCarrier{}).startFailed)
	b.now = clock.read
	exited := errors.New("worker exited")
	var tickets []startTicket
	for range 3 {
		ticket, err := b.claim()
		require.NoError(t, err)
		tickets = append(tickets, ticket)
	}
	for _, ticket := range tickets {
		b.settle(ticket, exited, false)
	}
	_, err := b.claim()
	require.ErrorContains(t, err, "1 in a row; the next start is tried in 100ms]")

	clock.advance(100 * time.Millisecond)
	probe, err := b.claim()
	require.NoError(t, err)
	b.settle(probe, context.Canceled, true) // the pool closed under it
	probe, err = b.claim()
	require.NoError(t, err, "a start cut short frees the probe and counts nothing")
	b.settle(probe, exited, false)
	_, err = b.claim()
	require.ErrorContains(t, err, "2 in a row; the next start is tried in 200ms]")

	b.reset()
	_, err = b.claim()
	require.NoError(t, err)
}

// After a worker process fails to start, the calls that find no process
// fail at once with that start's error, on every runner of the pool, and
// start nothing until the backoff has passed; then one start is tried,
// and once the cause is gone, the next start after the backoff serves.
func TestRunnerBacksOffAfterFailedStart(t *testing.T) {
	t.Setenv(envStartMode, "exit") // the workers' environment: not parallel
	c := newTestCarrier(t, 0)
	r, other := c.runner(t, 1), c.runner(t, 2)
	ctx := testkit.Ctx(t)

	_, err := r.acquire(ctx)
	require.ErrorIs(t, err, seam.ErrWorkerStartFailed)
	require.ErrorContains(t, err, "exited with status 1")
	assert.NotContains(t, err.Error(), "last start's failure", "this call waited for the start itself")
	require.Equal(t, 1, c.events.count(seam.StartFailed))

	const calls = 20
	for i := range calls {
		rr := r
		if i%2 == 1 {
			rr = other // the backoff is the pool's: the other worker spawns nothing either
		}
		_, err := rr.acquire(ctx)
		require.ErrorIs(t, err, seam.ErrWorkerStartFailed)
		require.ErrorContains(t, err, "exited with status 1")
		require.ErrorContains(t, err, "this is the last start's failure, 0s ago, 1 in a row; the next start is tried in 100ms]")
		var exit *cancel.Exit
		require.ErrorAs(t, err, &exit, "the last start's exit account")
		require.Nil(t, rr.pending, "nothing started")
	}
	other.Warm()
	assert.Nil(t, other.pending, "a new worker's warm-up starts nothing either")
	assert.Equal(t, 1, c.events.count(seam.StartFailed), "%d calls after a failed start cost no start", calls)

	c.clock.advance(100 * time.Millisecond)
	_, err = other.acquire(ctx)
	require.ErrorIs(t, err, seam.ErrWorkerStartFailed)
	assert.NotContains(t, err.Error(), "last start's failure", "the backoff passed: a start was tried")
	require.Equal(t, 2, c.events.count(seam.StartFailed))
	_, err = r.acquire(ctx)
	require.ErrorContains(t, err, "2 in a row; the next start is tried in 200ms]")

	t.Setenv(envStartMode, "") // the cause is gone: the next start works
	_, err = r.acquire(ctx)
	require.ErrorContains(t, err, "the next start is tried in 200ms]", "no start before the backoff has passed")
	c.clock.advance(200 * time.Millisecond)
	l, err := r.acquire(ctx)
	require.NoError(t, err)
	require.NotNil(t, l)
	_, err = other.acquire(ctx)
	require.NoError(t, err, "a start came up: the backoff is over for every worker")
	assert.Equal(t, 2, c.events.count(seam.Started))
	assert.Equal(t, 2, c.events.count(seam.StartFailed))
}

// Renew (RecycleWorkers) is never refused by the backoff, its failure
// arms none (the old process serves on), and its success ends one.
func TestRunnerRenewAndBackoff(t *testing.T) {
	t.Setenv(envStartMode, "")
	c := newTestCarrier(t, 0)
	r, other := c.runner(t, 1), c.runner(t, 2)
	ctx := testkit.Ctx(t)
	old, err := r.acquire(ctx)
	require.NoError(t, err)

	t.Setenv(envStartMode, "exit") // a broken program deployed
	_, err = r.Renew(ctx)
	require.ErrorIs(t, err, seam.ErrWorkerStartFailed)
	l, err := r.acquire(ctx)
	require.NoError(t, err)
	assert.Same(t, old, l, "the old process serves on")
	_, err = other.acquire(ctx)
	require.ErrorIs(t, err, seam.ErrWorkerStartFailed)
	assert.NotContains(t, err.Error(), "last start's failure", "a failed Renew arms no backoff")
	_, err = other.acquire(ctx)
	require.ErrorContains(t, err, "last start's failure", "other's own failed start does")
	require.Equal(t, 2, c.events.count(seam.StartFailed))

	t.Setenv(envStartMode, "") // the fix deployed
	_, err = r.Renew(ctx)
	require.NoError(t, err, "Renew starts at once, backoff or not")
	_, err = other.acquire(ctx)
	require.NoError(t, err, "Renew's start came up: the backoff is over")
	l, err = r.acquire(ctx)
	require.NoError(t, err)
	assert.NotSame(t, old, l, "the renewed process serves")
	assert.Equal(t, 3, c.events.count(seam.Started))
}

// Close returns promptly during a backoff, and when the pool's end cuts
// short the start tried after it, which neither counts as a failure nor
// keeps the next start from being tried; nothing is left behind (goleak).
func TestRunnerCloseDuringBackoff(t *testing.T) {
	t.Setenv(envStartMode, "silent") // a start that only the pool's end ends
	c := newTestCarrier(t, time.Hour)
	r := c.runner(t, 1)
	ticket, err := c.sp.starts.claim()
	require.NoError(t, err)
	c.sp.starts.settle(ticket, errors.New("an earlier failure"), false)
	_, err = r.acquire(testkit.Ctx(t))
	require.ErrorContains(t, err, "an earlier failure")

	c.clock.advance(time.Second)
	r.Warm() // the start after the backoff, which never comes up
	require.NotNil(t, r.pending)
	c.stop()
	r.Close()

	_, err = c.sp.starts.claim()
	require.NoError(t, err, "the start cut short freed its claim")
	assert.Equal(t, 0, c.events.count(seam.StartFailed), "a start cut short is no failure")
}

// testCarrier is a ProcessCarrier whose workers are this test binary (see
// TestMain), on a fake clock, with the events it reports counted.
type testCarrier struct {
	sp     *ProcessCarrier
	events *eventCount
	clock  *fakeClock
	stop   context.CancelFunc
}

// newTestCarrier returns a testCarrier whose starts time out after
// startTimeout (0: the default). Its stop ends with the test.
func newTestCarrier(t *testing.T, startTimeout time.Duration) *testCarrier {
	t.Helper()
	skipUnsupportedPlatform(t)
	stop, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	events := &eventCount{counts: map[seam.EventKind]int{}}
	sp, err := New(Options{
		MaxPayload:   DefaultMaxPayload,
		StartTimeout: startTimeout,
		Logger:       slog.New(slog.DiscardHandler),
	}, stop, events)
	require.NoError(t, err)
	clock := newFakeClock()
	sp.starts.now = clock.read
	return &testCarrier{sp: sp, events: events, clock: clock, stop: cancel}
}

// runner returns the carrier's runner id, closed at the test's end.
func (c *testCarrier) runner(t *testing.T, id int) *runner {
	r := c.sp.NewRunner(id).(*runner)
	t.Cleanup(r.Close)
	return r
}

// eventCount counts the events of each kind a carrier reports.
type eventCount struct {
	mu     sync.Mutex
	counts map[seam.EventKind]int
}

func (e *eventCount) Event(ev seam.Event) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.counts[ev.Kind]++
}

func (e *eventCount) MoreSlots() {}

func (e *eventCount) count(kind seam.EventKind) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.counts[kind]
}

// fakeClock is a clock that moves only when told.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newFakeClock() *fakeClock { return &fakeClock{now: time.Unix(1_700_000_000, 0)} }

func (c *fakeClock) read() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}
