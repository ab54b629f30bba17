package main

import (
	"context"
	"log"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/offloadgo/offload/natsjobs"
	"github.com/offloadgo/offload/pool"
)

// jobsDrain is how long a worker service stopped with SIGTERM lets its
// running jobs finish; the rest go back to the queue at once, for another
// worker service. 25 s fits Kubernetes' 30 s grace.
const jobsDrain = 25 * time.Second

// runWorker is the worker service (-role worker): it runs the jobs of the
// reports queue on the NATS server at natsURL, workers at a time, each in
// a worker process of this binary, until SIGINT or SIGTERM; then it
// drains. Start as many as the queue needs, anywhere that reaches the
// server: each job runs on one of them at a time.
func runWorker(natsURL string, workers int) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	nc, err := nats.Connect(natsURL)
	if err != nil {
		return err
	}
	defer nc.Close()
	q, err := natsjobs.Open(ctx, nc, natsjobs.Options{Name: reportsQueue})
	if err != nil {
		return err
	}
	defer q.Close()
	p, err := pool.New(pool.Options{
		Workers:   workers,
		Isolation: pool.Subprocess,
		Subprocess: pool.SubprocessOptions{
			MemoryLimit: 256 << 20, // a job that grows past it fails this attempt (and is retried)
		},
	})
	if err != nil {
		return err
	}
	defer p.Close()
	log.Printf("running the jobs of queue %q from %s", reportsQueue, natsURL)
	return natsjobs.Serve(ctx, q, p, natsjobs.ServeOptions{Drain: jobsDrain})
}
