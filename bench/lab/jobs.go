package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/offloadgo/offload/natsjobs"
	"github.com/offloadgo/offload/natsremote/embedded"
	"github.com/offloadgo/offload/pool"
)

// The durable-job rows: the 200 ms jobs as durable jobs (natsjobs), which
// the server accepts through natsjobs.Accept on a JetStream embedded in
// its process, and worker processes of one worker each (copies of this
// binary, as the remote rows' nodes are) run with natsjobs.Serve. A job's
// latency is from its intended send to its answer: enqueue, the worker's
// run and Accept's Wait seeing it succeeded, over HTTP.

// jobsWorkerEnv carries the NATS URL to a re-executed lab that is to be
// a durable-job worker process.
const jobsWorkerEnv = "OFFLOAD_LAB_JOBS_WORKER"

// jobsQueue names the lab's queue of jobs.
const jobsQueue = "lab"

// jobsWaitFor is Accept's WaitFor in the durable-job rows: longer than any
// job of theirs waits, so that each is answered with its end (200); a
// 202, which the table notes, says one did not end within it.
const jobsWaitFor = 10 * time.Second

// jobScenarios are the durable-job rows of group g: 1 and 4 jobs a
// second, as the other reference rows, on one worker process and on two.
func jobScenarios(g string) []scenario {
	var all []scenario
	for _, s := range []struct {
		jobs    float64
		workers int
		label   string
	}{
		{1, 1, "1 job/s, durable jobs, 1 worker process"},
		{4, 1, "4 jobs/s, durable jobs, 1 worker process"},
		{4, 2, "4 jobs/s, durable jobs, 2 worker processes"},
	} {
		all = append(all, scenario{Group: g, Name: s.label, JobsPerSec: s.jobs, Mode: jobsMode, Server: serverConfig{JobWorkers: s.workers}})
	}
	return all
}

// jobsMode is /job?mode=jobs: a durable job, accepted by natsjobs.Accept.
const jobsMode = "jobs"

// jobsWorkerMain makes this process a durable-job worker if
// jobsWorkerEnv says so: it serves the lab's queue until SIGTERM, then
// exits. Elsewhere it returns at once.
func jobsWorkerMain() {
	url := os.Getenv(jobsWorkerEnv)
	if url == "" {
		return
	}
	if err := serveJobs(url); err != nil {
		fmt.Fprintln(os.Stderr, "lab jobs worker:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// serveJobs runs the jobs of the queue on the NATS server at url through
// a pool of one goroutine worker, until SIGTERM.
func serveJobs(url string) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	nc, err := nats.Connect(url)
	if err != nil {
		return err
	}
	defer nc.Close()
	q, err := natsjobs.Open(ctx, nc, natsjobs.Options{Name: jobsQueue})
	if err != nil {
		return err
	}
	defer q.Close()
	p, err := pool.New(pool.Options{Workers: 1, MinWorkers: 1})
	if err != nil {
		return err
	}
	defer p.Close()
	return natsjobs.Serve(ctx, q, p, natsjobs.ServeOptions{})
}

// jobsHandler is the server's /job?mode=jobs for cfg: 400 without
// JobWorkers, 501 with why if they could not start. stop ends what it
// started.
func jobsHandler(cfg serverConfig) (h http.Handler, stop func()) {
	if cfg.JobWorkers == 0 {
		return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			http.Error(w, "lab server: no durable-job workers in this scenario", http.StatusBadRequest)
		}), func() {}
	}
	h, stop, err := durableJobs(cfg.JobWorkers, cfg.Items)
	if err != nil {
		return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			http.Error(w, err.Error(), http.StatusNotImplemented)
		}), func() {}
	}
	return h, stop
}

// durableJobs makes the server's /job?mode=jobs handler: a NATS server
// with JetStream in this process (on a temporary store, listening on
// 127.0.0.1), the queue, and n worker processes. It returns once n jobs
// have run through them (warmUp); stop ends the workers, the queue and
// the server, and removes the store.
func durableJobs(n, items int) (h http.Handler, stop func(), err error) {
	dir, err := os.MkdirTemp("", "offload-lab-jobs")
	if err != nil {
		return nil, nil, err
	}
	s, err := embedded.Start(embedded.Options{Listen: true, StoreDir: dir})
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, nil, err
	}
	var workers []*exec.Cmd
	var nc *nats.Conn
	var q *natsjobs.Queue
	stop = func() {
		for _, cmd := range workers {
			_ = cmd.Process.Signal(syscall.SIGTERM)
			_ = cmd.Wait()
		}
		if q != nil {
			_ = q.Close()
		}
		if nc != nil {
			nc.Close()
		}
		s.Shutdown()
		_ = os.RemoveAll(dir)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if nc, err = s.Connect(); err == nil {
		q, err = natsjobs.Open(ctx, nc, natsjobs.Options{Name: jobsQueue})
	}
	if err == nil {
		workers, err = startJobWorkers(n, s.ClientURL())
	}
	if err == nil {
		err = warmUp(ctx, q, n, items)
	}
	if err != nil {
		stop()
		return nil, nil, err
	}
	decode := func(*http.Request) (int, error) { return items, nil }
	return natsjobs.Accept(q, jobTask, decode, natsjobs.AcceptOptions{WaitFor: jobsWaitFor}), stop, nil
}

// startJobWorkers starts n worker processes serving the queue on the
// NATS server at url, each with one P, as the remote rows' nodes.
func startJobWorkers(n int, url string) ([]*exec.Cmd, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	var workers []*exec.Cmd
	for range n {
		cmd := exec.Command(exe)
		cmd.Env = append(os.Environ(), jobsWorkerEnv+"="+url, "GOMAXPROCS=1")
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			return workers, err
		}
		workers = append(workers, cmd)
	}
	return workers, nil
}

// warmUp runs n jobs through the workers before the server listens, so
// that the measured jobs don't wait for the workers to connect.
func warmUp(ctx context.Context, q *natsjobs.Queue, n, items int) error {
	ids := make([]natsjobs.ID, n)
	for i := range ids {
		var err error
		if ids[i], err = natsjobs.Enqueue(ctx, q, jobTask, items); err != nil {
			return err
		}
	}
	for _, id := range ids {
		if _, err := natsjobs.Wait(ctx, q, jobTask, id); err != nil {
			return fmt.Errorf("lab server: a warm-up job: %w", err)
		}
	}
	return nil
}
