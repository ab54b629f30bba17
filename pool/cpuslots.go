package pool

import (
	"context"
	"net/http"
	"runtime"
	"strconv"
	"sync/atomic"
	"time"
)

// CPUSlots are the slots ShedCPU's middleware admits handlers to: places
// for MaxRunning handlers to run and MaxQueue more to wait, shared by
// every handler their Shed wraps. Make them with NewCPUSlots (the zero
// value sheds every request); hold on to them to have Ready read them
// (ReadyOptions.CPU). A CPUSlots is safe for concurrent use, and has
// nothing to close: it holds no goroutine.
type CPUSlots struct {
	running  chan struct{} // a token for each handler that runs
	admitted atomic.Int64  // handlers running, and requests waiting to
	limit    int64         // MaxRunning + MaxQueue
	// overloaded: every place was taken, and since then no moment has
	// found nobody waiting (see Overloaded).
	overloaded atomic.Bool
	retry      string
	onShed     func(*http.Request, ShedReason)
}

// NewCPUSlots returns empty slots configured by opts, defaults applied as
// CPUOptions documents them (MaxRunning read from GOMAXPROCS now).
func NewCPUSlots(opts CPUOptions) *CPUSlots {
	running := opts.MaxRunning
	if running <= 0 {
		// Not GOMAXPROCS alone: a P above the CPUs is one for the
		// requests ShedCPU does not wrap, not for another handler.
		running = min(runtime.GOMAXPROCS(0), runtime.NumCPU())
	}
	queue := opts.MaxQueue
	switch {
	case queue == NoQueue || queue < 0:
		queue = 0
	case queue == 0:
		queue = running
	}
	retry := opts.RetryAfter
	if retry <= 0 {
		retry = DefaultMinRetryAfter
	}
	return &CPUSlots{
		running: make(chan struct{}, running),
		limit:   int64(running + queue),
		retry:   strconv.Itoa(int((retry + time.Second - 1) / time.Second)),
		onShed:  opts.OnShed,
	}
}

// Shed wraps next in ShedCPU's middleware on s: next runs in one of s's
// running slots, after waiting in one of its waiting places if none is
// free, and the requests that find every place taken, or whose ctx ends
// while they wait, are answered 503 with Retry-After instead. Handlers
// wrapped by the same s share its slots. See ShedCPU.
func (s *CPUSlots) Shed(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if reason := s.acquire(r.Context()); reason != 0 {
			s.reject(w, r, reason)
			return
		}
		defer s.release()
		next.ServeHTTP(w, r)
	})
}

// Full reports whether every running slot and every waiting place is
// taken, so that the next request would be shed (ShedQueueFull). It
// reads one atomic counter and does not block: the answer is a snapshot,
// which a handler's end or a request's arrival may change at once.
func (s *CPUSlots) Full() bool {
	return s.admitted.Load() >= s.limit
}

// Overloaded reports whether the slots have been full since a moment
// when nobody waited: it turns true when the last place is taken (the
// next request would be shed) and false only once a handler's end or a
// waiting request's leaving finds no request waiting. So a probe that
// reads it does not flap with each handler's end while a queue lasts,
// as one reading Full would at a steady overload. With NoQueue it is
// Full. Ready reads it. One atomic load; it does not block.
func (s *CPUSlots) Overloaded() bool {
	return s.overloaded.Load()
}

// occupancy is how many handlers run and how many requests wait, as read
// now; a request between its admission and its slot counts as waiting.
func (s *CPUSlots) occupancy() (running, waiting int) {
	admitted := int(s.admitted.Load())
	running = len(s.running)
	return running, max(admitted-running, 0)
}

// acquire takes a running slot, waiting for one if the queue has room,
// until ctx ends. 0 means the caller holds a slot and must release it.
func (s *CPUSlots) acquire(ctx context.Context) ShedReason {
	if n := s.admitted.Add(1); n >= s.limit {
		s.overloaded.Store(true)
		if n > s.limit {
			s.leave()
			return ShedQueueFull
		}
	}
	select {
	case s.running <- struct{}{}: // a free slot: no wait, no ctx read
		return 0
	default:
	}
	// Blocked senders on a channel are served in arrival order: the
	// queue is FIFO, and a newcomer never takes a freed slot before them.
	select {
	case s.running <- struct{}{}:
		return 0
	case <-ctx.Done():
		s.leave()
		return ShedDeadline
	}
}

func (s *CPUSlots) release() {
	<-s.running
	s.leave()
}

// leave counts out a request that ran, gave up waiting or was shed, and
// ends an overload once nobody waits.
func (s *CPUSlots) leave() {
	if s.admitted.Add(-1) <= int64(cap(s.running)) && s.overloaded.Load() {
		s.overloaded.Store(false)
	}
}

func (s *CPUSlots) reject(w http.ResponseWriter, r *http.Request, reason ShedReason) {
	if s.onShed != nil {
		s.onShed(r, reason)
	}
	w.Header().Set("Retry-After", s.retry)
	body := "pool: overloaded (" + reason.String() + ": every CPU slot is taken), retry later"
	if reason == ShedDeadline {
		body = "pool: overloaded (" + reason.String() + ": the request ended waiting for a CPU slot)"
	}
	http.Error(w, body, http.StatusServiceUnavailable)
}
