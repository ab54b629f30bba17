package main

import (
	"context"
	"net/http"
	"sync"
	"time"
)

// shedTimer wraps the /job handler in front of Shed and times, on the
// server, every 503 that Shed itself answers: from the request entering
// the middleware (its headers read) to the 503 flushed to the socket. It
// marks those responses with the Lab-Shed header, so that the client can
// tell them from 503s that came after a wait in the queue (QueueDelay).
type shedTimer struct {
	mu    sync.Mutex
	times []time.Duration
}

// shedHeader marks a 503 that Shed answered before the handler ran.
const shedHeader = "Lab-Shed"

type reachedKey struct{}

// wrap returns h (Shed in front of inner) timed; inner must call
// markReached first thing.
func (t *shedTimer) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		reached := new(bool)
		sw := &shedMarker{ResponseWriter: w, reached: reached}
		h.ServeHTTP(sw, r.WithContext(context.WithValue(r.Context(), reachedKey{}, reached)))
		if sw.shed {
			_ = http.NewResponseController(w).Flush()
			took := time.Since(start)
			t.mu.Lock()
			t.times = append(t.times, took)
			t.mu.Unlock()
		}
	})
}

// markReached records that the request got past Shed into the handler.
func markReached(r *http.Request) {
	if p, ok := r.Context().Value(reachedKey{}).(*bool); ok {
		*p = true
	}
}

// take summarizes the 503 times since the previous call.
func (t *shedTimer) take() dist {
	t.mu.Lock()
	times := t.times
	t.times = nil
	t.mu.Unlock()
	return summarizeDist(times)
}

// shedMarker notes a 503 written before the handler was reached and adds
// the Lab-Shed header to it.
type shedMarker struct {
	http.ResponseWriter
	reached *bool
	shed    bool
}

func (w *shedMarker) WriteHeader(code int) {
	if code == http.StatusServiceUnavailable && !*w.reached {
		w.shed = true
		w.Header().Set(shedHeader, "1")
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *shedMarker) Unwrap() http.ResponseWriter { return w.ResponseWriter }
