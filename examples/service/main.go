// Command service is offload in an HTTP service: POST /hash puts the
// request's body through rounds of SHA-256 in worker processes, with a
// deadline and a memory limit, behind Shed; GET /metrics is the pool's
// metrics for Prometheus.
//
//	go run ./examples/service
//	curl --data-binary @go.mod 'http://127.0.0.1:8080/hash?rounds=100000'
//	curl http://127.0.0.1:8080/metrics
//
// With -nats the same service runs its tasks on worker nodes over NATS
// instead, and the nodes are this same binary started with
// OFFLOAD_NATS_URL set (natsremote.Main makes them nodes). On one machine,
// with the NATS server embedded in the service:
//
//	go run ./examples/service -nats embedded
//	OFFLOAD_NATS_URL=nats://127.0.0.1:4222 OFFLOAD_NATS_POOL=hash OFFLOAD_NATS_DRAIN=25s \
//	OFFLOAD_NATS_ISOLATION=subprocess OFFLOAD_NATS_MEMORY_LIMIT=256MiB go run ./examples/service
//
// A node stopped with SIGTERM (a rolling deploy) drains: it takes no new
// tasks, which go to the other nodes, and finishes those it runs within
// OFFLOAD_NATS_DRAIN (25 s, the default, fits Kubernetes' 30 s grace;
// "none" for no wait) before it exits.
package main

import (
	"context"
	"errors"
	"flag"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/offloadgo/offload/natsremote"
)

func main() {
	natsremote.Main() // first: in a worker process or as a node, serve and never return

	addr := flag.String("addr", "127.0.0.1:8080", "address to listen on")
	workers := flag.Int("workers", 2, "tasks run at once")
	natsURL := flag.String("nats", "", `run tasks on worker nodes through this NATS server ("embedded": one in this process); default: worker processes here`)
	deadline := flag.Duration("deadline", 10*time.Second, "how long a request's task may take, queued and running")
	flag.Parse()
	if err := run(*addr, *workers, *natsURL, *deadline); err != nil {
		log.Fatal(err)
	}
}

// run serves until SIGINT or SIGTERM, then lets the requests in flight
// finish.
func run(addr string, workers int, natsURL string, deadline time.Duration) error {
	p, closeNATS, err := newPool(workers, natsURL)
	if err != nil {
		return err
	}
	defer closeNATS()
	defer p.Close()

	metrics, err := metricsHandler(p)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle("POST /hash", hashHandler(p, deadline))
	mux.Handle("GET /metrics", metrics)

	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	log.Printf("listening on http://%s", ln.Addr())

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	ctx, cancel := context.WithTimeout(context.Background(), deadline+5*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return p.Shutdown(ctx)
}
