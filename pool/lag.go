package pool

import (
	"context"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"time"
)

// The process's lag is the scheduling latency of its goroutines: how long
// a runnable goroutine waits for a P, which the runtime keeps as a
// histogram (/sched/latencies:seconds). It is Go's form of an event loop's
// delay: when handlers saturate every CPU, each request waits its turn
// before it runs, whatever pool it may use.
const (
	// lagInterval is how often the sampler reads the runtime's histogram.
	lagInterval = 100 * time.Millisecond
	// lagWindow is how many intervals the recent lag covers: half a
	// second. A shorter window follows a backlog closely but reads few
	// latencies; a longer one keeps Shed shedding after the backlog has
	// gone, with CPUs idle (in the lab, a one-second window cost about a
	// third of the goodput that half a second kept).
	lagWindow = 5
	// lagQuantile is the quantile of the window's latencies that is the
	// recent lag: a high one, so that a backlog shows before the median
	// moves, but not the maximum, which one unlucky wakeup sets.
	lagQuantile = 0.99
)

const schedLatencies = "/sched/latencies:seconds"

// lagSource is where Shed and Ready read the process's recent lag: the
// process's sampler, or a test's fake.
type lagSource interface {
	// recentLag is the lagQuantile of the scheduling latencies of the
	// last window; 0 while unknown. It must cost no more than an atomic
	// load: Shed calls it for every request.
	recentLag() time.Duration
	// watchWhile keeps the source up to date until ctx is done.
	watchWhile(ctx context.Context)
}

// processLag is the process's one sampler. Scheduling latency is a
// property of the process, not of a pool: one sampler serves every pool
// and every Shed, so the cost is paid once however many there are.
var processLag = &lagSampler{}

// lagSampler reads the runtime's scheduling-latency histogram every
// lagInterval, in a goroutine of its own, and keeps the lagQuantile of
// what the last lagWindow intervals added. The goroutine runs while any
// watcher's ctx (an open pool's) lasts, and starts again with the next.
type lagSampler struct {
	lag atomic.Int64 // ns: the recent lag

	mu       sync.Mutex
	watchers int
	stop     chan struct{} // closed to end the goroutine; nil while none runs

	// window holds the cumulative counts of the last lagWindow+1 reads,
	// oldest first, reused from read to read; written by sample alone.
	window [][]uint64
	// samples is kept from read to read: metrics.Read refills the
	// histogram a Sample holds instead of allocating another.
	samples []metrics.Sample
}

func (s *lagSampler) recentLag() time.Duration { return time.Duration(s.lag.Load()) }

// watchWhile starts the sampling goroutine if none runs, and lets it stop
// once ctx and every other watcher's ctx are done.
func (s *lagSampler) watchWhile(ctx context.Context) {
	s.mu.Lock()
	s.watchers++
	if s.stop == nil {
		s.stop = make(chan struct{})
		s.reset()
		s.readAndSample()
		go s.run(s.stop)
	}
	s.mu.Unlock()
	context.AfterFunc(ctx, s.unwatch)
}

func (s *lagSampler) unwatch() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.watchers--; s.watchers == 0 {
		close(s.stop)
		s.stop = nil
	}
}

// watching reports whether the sampling goroutine runs.
func (s *lagSampler) watching() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stop != nil
}

func (s *lagSampler) run(stop chan struct{}) {
	tick := time.NewTicker(lagInterval)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
			s.mu.Lock()
			if s.stop == stop { // not stopped and restarted meanwhile
				s.readAndSample()
			}
			s.mu.Unlock()
		}
	}
}

// reset forgets the window: a sampler that starts again knows nothing of
// the time it was stopped. s.mu is held.
func (s *lagSampler) reset() {
	s.window = s.window[:0]
	s.lag.Store(0)
}

// readAndSample reads the runtime's histogram and samples it. s.mu is held.
func (s *lagSampler) readAndSample() {
	if s.samples == nil {
		s.samples = []metrics.Sample{{Name: schedLatencies}}
	}
	metrics.Read(s.samples)
	if s.samples[0].Value.Kind() != metrics.KindFloat64Histogram {
		return // a runtime without the metric: the lag stays unknown
	}
	h := s.samples[0].Value.Float64Histogram()
	s.sample(h.Counts, h.Buckets)
}

// sample adds one read of the cumulative histogram (counts by bucket,
// bounds as metrics.Float64Histogram has them) to the window, and sets
// the recent lag from what the window's reads added. s.mu is held.
func (s *lagSampler) sample(counts []uint64, bounds []float64) {
	if len(s.window) > 0 && len(s.window[0]) != len(counts) {
		s.window = s.window[:0] // a histogram of another shape: start over
	}
	var slot []uint64
	if len(s.window) == lagWindow+1 {
		slot = s.window[0]
		copy(s.window, s.window[1:])
		s.window = s.window[:lagWindow]
	}
	slot = append(slot[:0], counts...)
	s.window = append(s.window, slot)
	oldest := s.window[0]
	s.lag.Store(int64(deltaQuantile(slot, oldest, bounds, lagQuantile)))
}

// deltaQuantile is the q quantile of the latencies that newer counts
// have over older ones, as the upper bound of the bucket it falls in; 0
// when there are none.
func deltaQuantile(newer, older []uint64, bounds []float64, q float64) time.Duration {
	var total uint64
	for i := range newer {
		total += newer[i] - older[i]
	}
	if total == 0 {
		return 0
	}
	rank := uint64(q*float64(total-1)) + 1
	var seen uint64
	for i := range newer {
		if seen += newer[i] - older[i]; seen >= rank {
			return bucketUpper(bounds, i)
		}
	}
	return bucketUpper(bounds, len(newer)-1)
}

// watchLag keeps lag sampled while p is open, once however many Sheds
// and Readies ask. A pool not made by New, or closed already, asks for
// nothing: Shed sheds all of its requests anyway.
func (p *Pool) watchLag(lag lagSource) {
	if p.usable() != nil || p.stop.Err() != nil || p.watchingLag.Swap(true) {
		return
	}
	lag.watchWhile(p.stop)
}

// lagGate says whether the process lags past max, with hysteresis: it
// turns on when the recent lag passes max and off only once the lag is
// back to max/2, so that a lag that hovers around max does not make Shed
// admit and shed by turns. Safe for concurrent use: callers that race on
// a turn store the same answer, read from the same lag.
type lagGate struct {
	src lagSource
	max time.Duration
	on  atomic.Bool
}

// over reads the recent lag and says whether to shed.
func (g *lagGate) over() bool {
	over, _ := g.read()
	return over
}

// read is over, with the lag it read.
func (g *lagGate) read() (bool, time.Duration) {
	lag := g.src.recentLag()
	if g.on.Load() {
		if lag <= g.max/2 {
			g.on.Store(false)
			return false, lag
		}
		return true, lag
	}
	if lag > g.max {
		g.on.Store(true)
		return true, lag
	}
	return false, lag
}
