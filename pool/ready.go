package pool

import (
	"fmt"
	"net/http"
	"slices"
	"time"
)

// ReadyOptions configures Ready. The zero value reports not ready only
// when a pool would shed every request: it is closed, full, or a Remote
// pool with no live node.
type ReadyOptions struct {
	// MaxLag is the process's recent scheduling latency past which it is
	// not ready, read as ShedOptions.MaxLag reads it and with the same
	// hysteresis: not ready once past MaxLag, ready again at MaxLag/2.
	// 0 means the lag is not checked. The lag is sampled while one of
	// Ready's pools is open, so MaxLag needs a pool: Ready panics on a
	// MaxLag with CPU slots alone (a pool that runs nothing will do).
	MaxLag time.Duration
	// MaxWait, as ShedOptions.MaxWait: a pool whose predicted wait for a
	// new task exceeds it is not ready. 0 means no wait check.
	MaxWait time.Duration
	// CPU are slots of ShedCPU's middleware (made with NewCPUSlots) to
	// watch: while any of them is overloaded (CPUSlots.Overloaded: from
	// the moment its every place is taken until nobody waits for one),
	// the process is not ready. Nil means none.
	CPU []*CPUSlots
}

// Ready returns an http.Handler for a readiness probe: it answers 503
// Service Unavailable while the process lags past opts.MaxLag, any of
// pools would shed a request (Shed's decision, with opts.MaxWait and no
// deadline), or any of opts.CPU is overloaded (its every place was taken
// and requests still wait), and 200 OK otherwise, with a one-line text
// body that says why ("ready", "not ready: process lags: ...", "not
// ready: pool 2 of 3 would shed (queue full)", "not ready: CPU slots 1 of
// 1 overloaded (2 running, 2 waiting)"; pools and slots are numbered as
// given). An
// orchestrator that sees it fail stops sending the process new work,
// without restarting it, until it has caught up. Each probe reads the
// pools' Load, the slots' counts and the lag the process's sampler keeps
// (a few atomic loads): it runs no task and waits for nothing. It counts
// nothing in Stats.Shed, and takes no slot.
//
// Ready keeps the process's lag sampled while any of pools is open, as
// Shed with a MaxLag does. It needs no pool when given CPU slots, but
// panics, on mistakes found at start-up, when it has nothing to check (no
// pool and no CPU slots), when a pool or CPU slots are nil, and when
// opts.MaxLag is set with no pool to bound the lag's sampling. The handler
// is safe for concurrent use, and answers 503 once a pool is closed.
//
// Liveness is the other probe, and must not fail under load: a process
// that is saturated is alive, and restarting it moves its load onto the
// others, which then saturate in turn. Serve it from a handler that
// depends on no pool and no lag (one that writes 200 and "ok"), and give
// the probe a wide timeout and failure threshold (Kubernetes
// timeoutSeconds: 5 or more, failureThreshold: 3 or more): under
// saturation its request too waits for a CPU, as every other does.
func Ready(opts ReadyOptions, pools ...*Pool) http.Handler {
	return readyOn(opts, processLag, pools...)
}

// readyOn is Ready with the lag read from lag.
func readyOn(opts ReadyOptions, lag lagSource, pools ...*Pool) http.Handler {
	if len(pools) == 0 && len(opts.CPU) == 0 {
		panic("pool: Ready has nothing to check: give it a pool or CPU slots")
	}
	if len(pools) == 0 && opts.MaxLag > 0 {
		panic("pool: Ready's MaxLag needs a pool: the lag is sampled only while one is open")
	}
	h := &readiness{}
	for _, p := range pools {
		if p == nil {
			panic("pool: Ready of a nil *Pool")
		}
		h.shedders = append(h.shedders, newShedder(p, ShedOptions{MaxWait: opts.MaxWait}))
	}
	for _, s := range opts.CPU {
		if s == nil {
			panic("pool: Ready of a nil *CPUSlots")
		}
	}
	h.cpu = slices.Clone(opts.CPU) // the caller's slice is theirs to reuse
	if opts.MaxLag > 0 {
		h.lag = &lagGate{src: lag, max: opts.MaxLag}
		for _, p := range pools {
			p.watchLag(lag)
		}
	}
	return h
}

// readiness is Ready's handler.
type readiness struct {
	shedders []*shedder // one a pool, for Shed's decision
	lag      *lagGate   // nil without MaxLag
	cpu      []*CPUSlots
}

func (h *readiness) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	if why := h.notReady(); why != "" {
		http.Error(w, "not ready: "+why, http.StatusServiceUnavailable)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = w.Write([]byte("ready\n"))
}

// notReady says why the process is not ready, or "" when it is.
func (h *readiness) notReady() string {
	if h.lag != nil {
		if over, lag := h.lag.read(); over {
			return fmt.Sprintf("process lags: p99 scheduling latency %v (ready again at %v)", lag, h.lag.max/2)
		}
	}
	for i, s := range h.shedders {
		if reason := s.decide(s.pool.Load(), 0, false); reason != 0 {
			return fmt.Sprintf("pool %d of %d would shed (%v)", i+1, len(h.shedders), reason)
		}
	}
	for i, s := range h.cpu {
		if s.Overloaded() {
			running, waiting := s.occupancy()
			return fmt.Sprintf("CPU slots %d of %d overloaded (%d running, %d waiting)", i+1, len(h.cpu), running, waiting)
		}
	}
	return ""
}
