package pool_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/pool"
)

// counted is a task input that records each run of its id and, if live
// is set, how many tasks run at once (the most in peak).
type counted struct {
	runs       *[]atomic.Int32
	live, peak *atomic.Int32
	id         int
	sleep      time.Duration
	panic      bool
}

var countedTask = pool.Register("test.counted", func(ctx context.Context, in counted) (int, error) {
	(*in.runs)[in.id].Add(1)
	if in.live != nil {
		n := in.live.Add(1)
		defer in.live.Add(-1)
		for old := in.peak.Load(); n > old && !in.peak.CompareAndSwap(old, n); old = in.peak.Load() {
		}
	}
	if in.panic {
		panic("planned")
	}
	if in.sleep > 0 {
		select {
		case <-time.After(in.sleep):
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
	return in.id, nil
})

// Every submission resolves exactly once — a result, an error or a
// rejection — under concurrent submitters, random cancels and deadlines and
// a shutdown midway; no task runs twice, a rejected task never runs, and
// the counters add up. One panic is planned (see plannedPanic), and one
// in twenty of the random tasks panic.
func TestEverySubmissionResolvesExactlyOnce(t *testing.T) {
	t.Parallel()
	const submitters, each = 16, 150
	p, err := pool.New(pool.Options{Workers: 3, MaxQueue: 6, IdleTimeout: 5 * time.Millisecond})
	require.NoError(t, err)
	plannedPanic(t, p)
	work := startLoad(t, p, submitters, each, 42, func(r *rand.Rand, in counted) (counted, context.Context, context.CancelFunc) {
		in.sleep, in.panic = time.Duration(r.IntN(300))*time.Microsecond, r.IntN(20) == 0
		ctx, cancel := randomEnd(r)
		return in, ctx, cancel
	})
	// Shut down midway, with a deadline that cuts some work off.
	require.Eventually(t, func() bool { return work.resolved.Load() > submitters*each/2 }, 30*time.Second, time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Millisecond)
	shutdownErr := p.Shutdown(ctx)
	cancel()
	completed := work.wait(t)
	require.NoError(t, p.Shutdown(context.Background()))
	if shutdownErr != nil {
		require.ErrorIs(t, shutdownErr, context.DeadlineExceeded)
	}

	st := p.Stats()
	checkCounts(t, st, completed, submitters*each+1)
	assert.Equal(t, 0, st.Workers)
	assert.Greater(t, st.Rejected, uint64(0), "the test exercised rejection")
	assert.Greater(t, st.Canceled, uint64(0), "the test exercised cancellation")
	assert.Greater(t, st.Failed, uint64(0), "the test exercised panics")
}

// load is a property test's submissions of countedTask: submitters
// goroutines of each tasks, task id s*each+k being submitter s's k-th.
type load struct {
	runs     []atomic.Int32
	outcomes []outcome // by id, once wait has returned
	resolved atomic.Int64
	wg       sync.WaitGroup
}

// startLoad starts the submitters of a load on p. Each submits through
// submitAny with a rand of its own, seeded by its number and seed; next
// makes a task's input from the one with its runs and id set, and its ctx,
// and the func that ends the ctx once the task has resolved.
func startLoad(t *testing.T, p *pool.Pool, submitters, each int, seed uint64,
	next func(r *rand.Rand, in counted) (counted, context.Context, context.CancelFunc)) *load {
	l := &load{runs: make([]atomic.Int32, submitters*each), outcomes: make([]outcome, submitters*each)}
	for s := range submitters {
		l.wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(s), seed))
			for k := range each {
				id := s*each + k
				in, ctx, cancel := next(r, counted{runs: &l.runs, id: id})
				l.outcomes[id] = submitAny(t, r, ctx, p, countedTask, in)
				cancel()
				l.resolved.Add(1)
			}
		})
	}
	return l
}

// wait waits for every submission to resolve and checks the runs against
// the outcomes (see checkRuns), returning how many completed.
func (l *load) wait(t *testing.T) (completed int) {
	t.Helper()
	l.wg.Wait()
	c := checkRuns(t, l.outcomes, l.runs)
	require.Equal(t, len(l.outcomes), c.used, "every id was submitted")
	return c.completed
}

// randomEnd returns a ctx that, as r picks, never ends (half the time),
// has a deadline up to 400 µs away, or is cancelled up to 300 µs from now;
// and its cancel.
func randomEnd(r *rand.Rand) (context.Context, context.CancelFunc) {
	ctx, cancel := context.Background(), context.CancelFunc(func() {})
	switch r.IntN(4) {
	case 1:
		ctx, cancel = context.WithTimeout(ctx, time.Duration(r.IntN(400))*time.Microsecond)
	case 2:
		ctx, cancel = context.WithCancel(ctx)
		go func(d time.Duration) { time.Sleep(d); cancel() }(time.Duration(r.IntN(300)) * time.Microsecond)
	}
	return ctx, cancel
}

// outcome is what one submission of an id-returning task came to; used
// is false in the zero outcome, of an id that no submission used.
type outcome struct {
	out      int
	err      error
	rejected bool
	used     bool
}

// submitAny submits in to task through Run, Submit or SubmitBlocking, as
// r picks, and waits for its end. A refusal is marked: ErrQueueFull from
// Run (whose ErrClosed may also mean Close dropped it later), any error
// from Submit and SubmitBlocking.
func submitAny[In any](t *testing.T, r *rand.Rand, ctx context.Context, p *pool.Pool, task pool.Task[In, int], in In) outcome {
	o := outcome{used: true}
	switch r.IntN(3) {
	case 0:
		o.out, o.err = pool.Run(ctx, p, task, in)
		o.rejected = errors.Is(o.err, pool.ErrQueueFull)
	default:
		submit := pool.Submit[In, int]
		if r.IntN(2) == 0 {
			submit = pool.SubmitBlocking[In, int]
		}
		f, err := submit(ctx, p, task, in)
		if err != nil {
			return outcome{err: err, rejected: true, used: true}
		}
		o.out, o.err = f.Wait()
		again, againErr := f.Wait()
		assert.Equal(t, o.out, again, "Wait is stable")
		assert.Equal(t, o.err, againErr, "Wait is stable")
	}
	return o
}

// tally counts a test's outcomes: the ids used, and of those how many
// completed, were refused, and were refused for room (ErrQueueFull).
type tally struct{ used, completed, rejected, full int }

// checkRuns checks each id's outcome against its runs, and counts them:
// no task ran twice, a result comes from its one run and is its id, a
// refused task never ran, nor did an id that no submission used.
func checkRuns(t *testing.T, outcomes []outcome, runs []atomic.Int32) tally {
	t.Helper()
	var c tally
	for id, o := range outcomes {
		n := runs[id].Load()
		require.LessOrEqual(t, n, int32(1), "task %d ran %d times", id, n)
		if !o.used {
			require.Zero(t, n, "id %d ran, though no submission used it", id)
			continue
		}
		c.used++
		switch {
		case o.err == nil:
			c.completed++
			require.Equal(t, id, o.out)
			require.Equal(t, int32(1), n, "a result comes from a run")
		case o.rejected:
			c.rejected++
			require.Zero(t, n, "refused task %d ran (%v)", id, o.err)
			if errors.Is(o.err, pool.ErrQueueFull) {
				c.full++
			}
		}
	}
	return c
}

// plannedPanic runs on p, before a random load, a task that panics,
// and requires it to have run once and failed with its panic: whatever
// share of the load a busy machine lets run (most of it may be refused
// for room), the pool has counted a panic. Its submission counts in p's
// Stats.
func plannedPanic(t *testing.T, p *pool.Pool) {
	t.Helper()
	runs := make([]atomic.Int32, 1)
	_, err := pool.Run(context.Background(), p, countedTask, counted{runs: &runs, panic: true})
	var pe *pool.PanicError
	require.ErrorAs(t, err, &pe)
	require.EqualValues(t, 1, runs[0].Load())
}

// checkCounts checks a settled pool's Stats against a test's tally: the
// tasks that completed, and total submissions each counted once, as
// accepted (and then ended once: completed, failed or canceled) or
// rejected.
func checkCounts(t *testing.T, st pool.Stats, completed, total int) {
	t.Helper()
	assert.Equal(t, uint64(completed), st.Completed)
	assert.Equal(t, st.Submitted, st.Completed+st.Failed+st.Canceled, "every accepted task ended once: %+v", st)
	assert.Equal(t, uint64(total), st.Submitted+st.Rejected)
}

// Many goroutines hammering one pool with every entry point, under -race.
func TestStress(t *testing.T) {
	t.Parallel()
	p := newPool(t, pool.Options{Workers: 4, MinWorkers: 1, MaxQueue: 64, IdleTimeout: time.Millisecond})
	var wg sync.WaitGroup
	var ok atomic.Int64
	for g := range 32 {
		wg.Go(func() {
			for i := range 300 {
				in := [2]int{g, i}
				var out int
				var err error
				if i%2 == 0 {
					out, err = pool.Run(context.Background(), p, add, in)
				} else {
					var f *pool.Future[int]
					if f, err = pool.SubmitBlocking(context.Background(), p, add, in); err == nil {
						out, err = f.Wait()
					}
				}
				if errors.Is(err, pool.ErrQueueFull) {
					continue
				}
				if assert.NoError(t, err) && assert.Equal(t, g+i, out) {
					ok.Add(1)
				}
				if i%50 == 0 {
					_ = p.Stats()
				}
			}
		})
	}
	wg.Wait()
	st := p.Stats()
	assert.Equal(t, uint64(ok.Load()), st.Completed)
	assert.Equal(t, uint64(32*300), st.Submitted+st.Rejected)
	// Every task's slot and worker were freed before its caller woke, and
	// the lock-free mirrors with them.
	l := p.Load()
	assert.Zero(t, l.InFlight, "%+v", l)
	assert.Zero(t, l.Busy, "%+v", l)
	assert.Zero(t, l.Queued, "%+v", l)
}
