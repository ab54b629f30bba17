package main

import (
	"context"
	"io"
	"math/rand/v2"
	"net/http"
	"sync"
	"time"
)

// sample is one request's outcome. Latency runs from the request's
// intended send time, not from when it was actually sent, so that a
// generator running late (a stalled machine) still charges the wait to the
// server: no coordinated omission.
type sample struct {
	Stream  string        // "fast" or "job"
	Run     int           // which measured run of its scenario
	At      time.Duration // intended send time, since the scenario started
	Latency time.Duration
	Lag     time.Duration // how late the generator sent it: the client's own scheduling
	Status  int           // HTTP status; 0 when the request failed (timeout, reset)
	Retry   bool          // a Retry-After header came with it
	Shed    bool          // a 503 that Shed answered before the handler (Lab-Shed header)
}

// arrival is one scheduled request.
type arrival struct {
	at     time.Duration
	stream string
	path   string
}

// poisson appends arrivals at rate per second over [from, to): exponential
// gaps from rng, so the same seed gives every scenario the same sequence.
func poisson(dst []arrival, rng *rand.Rand, rate float64, from, to time.Duration, stream, path string) []arrival {
	if rate <= 0 {
		return dst
	}
	for t := from + time.Duration(rng.ExpFloat64()/rate*float64(time.Second)); t < to; t += time.Duration(rng.ExpFloat64() / rate * float64(time.Second)) {
		dst = append(dst, arrival{at: t, stream: stream, path: path})
	}
	return dst
}

// evenly appends arrivals every 1/rate seconds over [from, to), the first
// half a period in: the reference's setInterval jobs.
func evenly(dst []arrival, rate float64, from, to time.Duration, stream, path string) []arrival {
	if rate <= 0 {
		return dst
	}
	period := time.Duration(float64(time.Second) / rate)
	for t := from + period/2; t < to; t += period {
		dst = append(dst, arrival{at: t, stream: stream, path: path})
	}
	return dst
}

// generator fires a schedule of requests open-loop: each on its own
// goroutine at its time, whatever the earlier ones are doing.
type generator struct {
	client  *http.Client
	base    string
	timeout map[string]time.Duration // per stream

	mu      sync.Mutex
	samples []sample
	sent    map[string]int
}

// run fires every arrival (sorted by time) measured from start, then waits
// for all of them; progress, if set, is called every 250 ms meanwhile.
func (g *generator) run(ctx context.Context, start time.Time, plan []arrival, progress func(elapsed time.Duration, sent map[string]int)) {
	var wg sync.WaitGroup
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	g.mu.Lock()
	g.sent = map[string]int{}
	g.mu.Unlock()
	for _, a := range plan {
		for wait := time.Until(start.Add(a.at)); wait > 0; wait = time.Until(start.Add(a.at)) {
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-tick.C:
				t.Stop()
				if progress != nil {
					progress(time.Since(start), g.sentCopy())
				}
			case <-ctx.Done():
				t.Stop()
				wg.Wait()
				return
			}
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			g.fire(ctx, start, a)
		}()
		g.mu.Lock()
		g.sent[a.stream]++
		g.mu.Unlock()
	}
	wg.Wait()
}

func (g *generator) sentCopy() map[string]int {
	g.mu.Lock()
	defer g.mu.Unlock()
	m := make(map[string]int, len(g.sent))
	for k, v := range g.sent {
		m[k] = v
	}
	return m
}

func (g *generator) fire(ctx context.Context, start time.Time, a arrival) {
	intended := start.Add(a.at)
	ctx, cancel := context.WithTimeout(ctx, g.timeout[a.stream])
	defer cancel()
	s := sample{Stream: a.stream, At: a.at, Lag: time.Since(intended)}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, g.base+a.path, nil)
	if err == nil {
		var resp *http.Response
		if resp, err = g.client.Do(req); err == nil {
			_, err = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if err == nil {
				s.Status = resp.StatusCode
				s.Retry = resp.Header.Get("Retry-After") != ""
				s.Shed = resp.Header.Get(shedHeader) != ""
			}
		}
	}
	s.Latency = time.Since(intended)
	g.mu.Lock()
	g.samples = append(g.samples, s)
	g.mu.Unlock()
}

// take returns the samples so far and forgets them.
func (g *generator) take() []sample {
	g.mu.Lock()
	defer g.mu.Unlock()
	s := g.samples
	g.samples = nil
	return s
}
