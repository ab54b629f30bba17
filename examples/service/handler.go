package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/offloadgo/offload/pool"
	"github.com/offloadgo/offload/poolprom"
)

const (
	defaultRounds = 100_000  // tens of milliseconds of CPU
	maxRounds     = 1 << 30  // minutes of CPU: the deadline stops it first
	maxBody       = 64 << 10 // bytes of request body
)

// hashHandler serves POST /hash?rounds=N: the hex SHA-256 of the body,
// hashed N times, computed in p. Shed answers 503 before the handler runs
// when p can't start the work within a second, or before the request's
// deadline; a task still running at its deadline is stopped, and the
// client gets 504. The deadline is set outside Shed, so that Shed sees
// it.
func hashHandler(p *pool.Pool, deadline time.Duration) http.Handler {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rounds := defaultRounds
		if v := r.URL.Query().Get("rounds"); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > maxRounds {
				http.Error(w, fmt.Sprintf("rounds: want 1 to %d", maxRounds), http.StatusBadRequest)
				return
			}
			rounds = n
		}
		data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
		if err != nil {
			http.Error(w, err.Error(), http.StatusRequestEntityTooLarge)
			return
		}
		sum, err := pool.Run(r.Context(), p, Hash, HashIn{Data: data, Rounds: rounds})
		if err != nil {
			pool.WriteError(w, err) // 503 + Retry-After if full, 504 past the deadline, 502 if the worker died, else 500
			return
		}
		fmt.Fprintln(w, sum)
	})
	shed := pool.Shed(p, pool.ShedOptions{MaxWait: time.Second})(h)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), deadline)
		defer cancel()
		shed.ServeHTTP(w, r.WithContext(ctx))
	})
}

// metricsHandler serves the pool's metrics (and the Go runtime's) to
// Prometheus.
func metricsHandler(p *pool.Pool) (http.Handler, error) {
	c := poolprom.New(poolprom.Options{})
	if err := c.Add("hash", p); err != nil {
		return nil, err
	}
	reg := prometheus.NewRegistry()
	if err := reg.Register(c); err != nil {
		return nil, err
	}
	reg.MustRegister(collectors.NewGoCollector())
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{}), nil
}
