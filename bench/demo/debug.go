package main

import (
	"context"
	"errors"
	"expvar"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/pprof"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/offloadgo/offload/pool"
	"github.com/offloadgo/offload/poolprom"
)

// debugMux is the /debug wiring the README shows: Prometheus metrics for
// the pool (and the Go runtime), the pool's Stats as expvar JSON, and
// pprof, whose CPU profiles carry each task's labels
// (go tool pprof -tagfocus task=demo.hash).
func debugMux(p *pool.Pool) (*http.ServeMux, error) {
	reg := prometheus.NewRegistry()
	c := poolprom.New(poolprom.Options{})
	if err := c.Add("demo", p); err != nil {
		return nil, err
	}
	reg.MustRegister(c, collectors.NewGoCollector())

	mux := http.NewServeMux()
	mux.Handle("/debug/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	expvar.Publish("offload.demo", expvar.Func(func() any { return p.Stats() }))
	mux.Handle("/debug/vars", expvar.Handler())
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	return mux, nil
}

// showMetrics prints a few lines of what a scrape of mux's
// /debug/metrics returns.
func showMetrics(mux *http.ServeMux) error {
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/debug/metrics", nil))
	if rec.Code != http.StatusOK {
		return fmt.Errorf("/debug/metrics answered %d", rec.Code)
	}
	for _, line := range strings.Split(rec.Body.String(), "\n") {
		for _, name := range []string{"offload_completed_total", "offload_rejected_total", "offload_run_seconds_count", `offload_task_runs_total{outcome="failed"`} {
			if strings.HasPrefix(line, name) {
				fmt.Println("  ", line)
			}
		}
	}
	return nil
}

// serveDebug serves mux on addr and keeps a trickle of work going, so
// that the metrics move, until an interrupt.
func serveDebug(ctx context.Context, addr string, mux *http.ServeMux, p *pool.Pool, rounds int) error {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	srv := &http.Server{Addr: addr, Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		<-ctx.Done()
		srv.Close()
	}()
	go func() {
		for ctx.Err() == nil {
			_, _ = pool.Run(ctx, p, hash, rounds)
			time.Sleep(50 * time.Millisecond)
		}
	}()
	fmt.Printf("serving http://%s/debug/metrics, /debug/vars and /debug/pprof/ until interrupted\n", addr)
	if err := srv.ListenAndServe(); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
