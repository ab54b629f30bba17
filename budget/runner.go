package budget

import (
	"context"
	"math"
	"runtime"
	"time"
)

const (
	// checksPerBudget sets the target time between two clock reads to
	// Budget/checksPerBudget: 50 µs for 5 ms. A read costs tens of
	// nanoseconds, so the checks cost about 0.1% or less. It is also the
	// most a slow item can carry over with it: the cheap items that ran
	// after it in the same stride.
	checksPerBudget = 100
	// maxStride bounds the items run between two clock reads, so that a
	// near-zero measured cost cannot turn into a stride that never ends.
	maxStride = 1 << 24
)

// runner is the state of one chunked run, shared by Loop, Each and Stepper.
// It is owned by one goroutine.
type runner struct {
	clock    clock
	budget   time.Duration
	interval time.Duration // target time between clock reads
	stride   int           // items to run before the next clock read
	cost     float64       // ns per item at the last read; 0 until known
	yield    func()        // nil: runtime.Gosched
	duty     float64       // in (0, 1) when resting, else 0

	started bool
	origin  time.Duration // clock time when the run started
	report  Report
}

func newRunner(opts Options) *runner {
	r := &runner{
		clock:  clockOf(opts),
		budget: opts.budget(),
		stride: 1, // the first read measures one item; strides grow from there
		yield:  opts.Yield,
	}
	r.interval = r.budget / checksPerBudget
	if opts.resting() {
		r.duty = opts.DutyCycle
	}
	return r
}

// start records the run's origin the first time it is called.
func (r *runner) start() {
	if !r.started {
		r.started = true
		r.origin = r.clock.now()
	}
}

// chunk runs items lo, lo+1, ... (below n) through run, in strides, until a
// clock read finds the budget spent or the items run out. It always runs at
// least one item when lo < n.
func (r *runner) chunk(lo, n int, run func(lo, hi int)) Chunk {
	r.start()
	begin := r.clock.now()
	last, i := begin, lo
	for i < n {
		k := min(r.stride, n-i, r.fit(r.budget-(last-begin)))
		run(i, i+k)
		i += k
		now := r.clock.now()
		r.report.ClockReads++
		r.adapt(now-last, k)
		last = now
		if now-begin >= r.budget {
			break
		}
	}
	took := last - begin
	r.report.Items += i - lo
	r.report.Chunks++
	r.report.Busy += took
	r.report.MaxBlock = max(r.report.MaxBlock, took)
	r.report.Total = last - r.origin
	return Chunk{Start: lo, End: i, Took: took}
}

// fit returns how many items at the last measured cost it takes to spend
// rest, rounded up: near the end of a chunk the stride shrinks to land just
// past the budget, so uniform items overrun it by less than one item.
func (r *runner) fit(rest time.Duration) int {
	if r.cost <= 0 || rest <= 0 {
		return maxStride
	}
	return int(min(math.Ceil(float64(rest)/r.cost), maxStride))
}

// adapt sets the next stride from the last one: k items took elapsed. The
// stride aims at r.interval between reads; it falls at once when items turn
// out slower (down to 1, a read after every item, so a slow item overruns
// the budget by about its own cost) and at most doubles when they are
// faster, so one cheap stretch cannot launch a huge stride into slow items.
func (r *runner) adapt(elapsed time.Duration, k int) {
	limit := min(2*r.stride, maxStride)
	if elapsed <= 0 {
		r.cost = 0
		r.stride = limit
		return
	}
	r.cost = float64(elapsed) / float64(k)
	want := float64(r.interval) * float64(k) / float64(elapsed)
	r.stride = max(1, min(limit, int(min(want, maxStride))))
}

// pause is what the run does between chunks (and before the first): rest
// what the duty cycle owes, else call the caller's Yield, else
// runtime.Gosched. A rest ends early when ctx ends.
func (r *runner) pause(ctx context.Context) {
	r.start()
	r.report.Yields++
	switch {
	case r.duty > 0:
		owed := time.Duration(float64(r.report.Busy)*(1-r.duty)/r.duty) - r.report.Rest
		if owed <= 0 {
			gosched()
			break
		}
		before := r.clock.now()
		r.clock.sleep(ctx, owed)
		r.report.Rest += r.clock.now() - before
	case r.yield != nil:
		r.yield()
	default:
		gosched()
	}
}

// gosched is the default yield: runtime.Gosched twice. Gosched parks the
// caller on the global run queue, and once every 61 schedules the scheduler
// takes from that queue first, handing the P straight back to the caller
// and skipping whoever waits in the local queue (a request handler, a
// ticker) for a whole further chunk. The second call never lands on that
// same tick, so every yield lets the waiting goroutines run; it costs one
// more trip through the scheduler, well under a microsecond per chunk.
func gosched() {
	runtime.Gosched()
	runtime.Gosched()
}

// finish stamps the run's total time at return.
func (r *runner) finish() Report {
	if r.started {
		r.report.Total = r.clock.now() - r.origin
	}
	return r.report
}
