package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/offloadgo/offload/pool"
)

// serverEnv carries the server's config (JSON) to the re-executed lab.
const serverEnv = "OFFLOAD_LAB_SERVER"

// serverConfig is what one scenario's server process runs.
type serverConfig struct {
	Items    int           // items in one job (about JobTime of CPU)
	Pool     string        // "pool<N>", "proc<N>" or "remote<N>": the pool /job?mode=<Pool> uses; "" for none
	MaxQueue int           // the pool's MaxQueue (0: auto)
	Shed     bool          // put pool.Shed in front of the pool's /job
	MaxWait  time.Duration // ShedOptions.MaxWait

	QueueDelay pool.QueueDelay // the pool's QueueDelay

	MaxLag   time.Duration // put pool.Shed with this MaxLag in front of /job?mode=inline
	ReadyLag time.Duration // serve /readyz: pool.Ready with this MaxLag (and the CPU slots, with CPU)
	CPU      bool          // put pool.CPUSlots (zero CPUOptions) in front of /job?mode=inline

	JobWorkers int // durable-job worker processes behind /job?mode=jobs (jobs.go); 0 for none
}

// labNice is the nice increment of the lab's "nice" pool modes: that of
// nice(1) without -n.
const labNice = 10

// poolMode is a pool mode parsed.
type poolMode struct {
	iso     pool.Isolation
	workers int // for remote: nodes of one worker each
	nice    int // SubprocessOptions.Nice, or a node's nice increment
}

// poolSpec parses "pool2", "proc1" or "remote2", and for worker processes
// and nodes the same with a "nice" suffix ("proc2nice": they run at
// labNice; goroutines can't be niced).
func poolSpec(mode string) (poolMode, bool) {
	var m poolMode
	rest, niced := strings.CutSuffix(mode, "nice")
	if niced {
		m.nice = labNice
	}
	switch {
	case strings.HasPrefix(rest, "pool") && !niced:
		rest = rest[len("pool"):]
	case strings.HasPrefix(rest, "proc"):
		m.iso, rest = pool.Subprocess, rest[len("proc"):]
	case strings.HasPrefix(rest, "remote"):
		m.iso, rest = pool.Remote, rest[len("remote"):]
	default:
		return m, false
	}
	n, err := strconv.Atoi(rest)
	m.workers = n
	return m, err == nil && n > 0
}

// serve is the server process: it listens on 127.0.0.1, prints its address
// on stdout and serves until its stdin closes (the lab closes it, or dies).
func serve(raw string) error {
	var cfg serverConfig
	if err := json.Unmarshal([]byte(raw), &cfg); err != nil {
		return fmt.Errorf("lab server: bad config: %w", err)
	}
	var p *pool.Pool
	var poolErr error
	if cfg.Pool != "" {
		m, ok := poolSpec(cfg.Pool)
		if !ok {
			return fmt.Errorf("lab server: bad pool %q", cfg.Pool)
		}
		o := pool.Options{Workers: m.workers, MinWorkers: m.workers, MaxQueue: cfg.MaxQueue, Isolation: m.iso, QueueDelay: cfg.QueueDelay}
		if m.iso == pool.Subprocess {
			o.Subprocess.Nice = m.nice
		}
		if m.iso == pool.Remote {
			var stop func()
			if p, stop, poolErr = remotePool(m.workers, m.nice, o); poolErr == nil {
				defer stop()
			}
		} else if p, poolErr = pool.New(o); poolErr == nil {
			defer p.Close()
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	sched := newSchedWatch()
	timer := &shedTimer{}
	mux := http.NewServeMux()
	mux.HandleFunc("/fast", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") })
	mux.HandleFunc("/stats", func(w http.ResponseWriter, _ *http.Request) {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		st := serverStats{Goroutines: runtime.NumGoroutine(), HeapInuse: ms.HeapInuse, Sched: sched.since(), Shed: timer.take()}
		if p != nil {
			st.RunP50 = p.Stats().RunTime.P50
		}
		_ = json.NewEncoder(w).Encode(st)
	})
	// guard is the pool the saturated scenarios' Shed and Ready read: it
	// runs nothing, so only the process's lag makes them say no.
	var guard *pool.Pool
	if cfg.MaxLag > 0 || cfg.ReadyLag > 0 {
		if guard, err = pool.New(pool.Options{Workers: 1}); err != nil {
			return err
		}
		defer guard.Close()
	}
	var cpu []*pool.CPUSlots // what ShedCPU would hold, named so that Ready reads it
	if cfg.CPU {
		cpu = append(cpu, pool.NewCPUSlots(pool.CPUOptions{}))
	}
	inline := inlineJob(cfg, timer, guard, cpu)
	if cfg.ReadyLag > 0 {
		mux.Handle("/readyz", pool.Ready(pool.ReadyOptions{MaxLag: cfg.ReadyLag, CPU: cpu}, guard))
	}
	jobs, stopJobs := jobsHandler(cfg)
	defer stopJobs()
	var poolJob http.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		markReached(r)
		out, err := pool.Run(r.Context(), p, jobTask, cfg.Items)
		if err != nil {
			pool.WriteError(w, err)
			return
		}
		fmt.Fprintln(w, out)
	})
	if p != nil && cfg.Shed {
		poolJob = timer.wrap(pool.Shed(p, pool.ShedOptions{MaxWait: cfg.MaxWait})(poolJob))
	}
	mux.HandleFunc("/job", func(w http.ResponseWriter, r *http.Request) {
		mode := r.URL.Query().Get("mode")
		var out uint64
		var err error
		chunking, isChunked := chunkSpec(mode)
		switch {
		case mode == "inline":
			inline.ServeHTTP(w, r)
			return
		case isChunked:
			out, err = chunked(r.Context(), cfg.Items, chunking)
		case mode == jobsMode:
			jobs.ServeHTTP(w, r)
			return
		case mode == cfg.Pool:
			if poolErr != nil {
				http.Error(w, poolErr.Error(), http.StatusNotImplemented)
				return
			}
			poolJob.ServeHTTP(w, r)
			return
		default:
			http.Error(w, "lab server: unknown mode "+strconv.Quote(mode), http.StatusBadRequest)
			return
		}
		if err != nil {
			pool.WriteError(w, err)
			return
		}
		fmt.Fprintln(w, out)
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin) // EOF: the lab is done with us
		_ = srv.Close()
	}()
	if _, err := fmt.Fprintln(os.Stdout, "listen", ln.Addr().String()); err != nil {
		return err
	}
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// inlineJob is /job?mode=inline: the job on the handler's goroutine, to
// its end whatever the client does, behind Shed on lag if cfg says so,
// and behind cpu's slots (ShedCPU's middleware) if any.
func inlineJob(cfg serverConfig, timer *shedTimer, guard *pool.Pool, cpu []*pool.CPUSlots) http.Handler {
	var h http.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		markReached(r)
		out, err := spinItems(context.Background(), cfg.Items)
		if err != nil {
			pool.WriteError(w, err)
			return
		}
		fmt.Fprintln(w, out)
	})
	for _, slots := range cpu {
		h = slots.Shed(h)
	}
	if cfg.MaxLag > 0 {
		h = pool.Shed(guard, pool.ShedOptions{MaxLag: cfg.MaxLag})(h)
	}
	if len(cpu) > 0 || cfg.MaxLag > 0 {
		h = timer.wrap(h)
	}
	return h
}

// serverStats is /stats: what the lab samples to see memory and goroutines
// stay flat.
type serverStats struct {
	Goroutines int
	HeapInuse  uint64
	RunP50     time.Duration // the pool's median task run time so far: the real job cost under contention

	// Since the previous /stats: how long the server's goroutines sat
	// runnable, and how long Shed's 503s took on the server.
	Sched schedDist
	Shed  dist
}

// readListen reads the server's "listen ADDR" line.
func readListen(r io.Reader) (string, error) {
	line, err := bufio.NewReader(r).ReadString('\n')
	if err != nil {
		return "", fmt.Errorf("lab: server did not start: %w", err)
	}
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "listen ")
	if !ok {
		return "", fmt.Errorf("lab: server said %q", line)
	}
	return addr, nil
}
