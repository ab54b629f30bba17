// Command service is offload in an HTTP service: POST /hash puts the
// request's body through rounds of SHA-256 in worker processes, with a
// deadline and a memory limit, behind Shed; POST /reports makes a report
// a durable job, which a worker service runs; GET /jobs/{id} is a job's
// status and, once done, its report; GET /metrics is the pool's metrics
// for Prometheus.
//
//	go run ./examples/service                 # the API, with a NATS server (JetStream) in it on 127.0.0.1:4222
//	go run ./examples/service -role worker    # a worker service: runs the reports' jobs
//	curl --data-binary @go.mod 'http://127.0.0.1:8080/hash?rounds=100000'
//	curl -i -d '{"rows": 1000}' http://127.0.0.1:8080/reports        # 200 and the report: ready within a second
//	curl -i -d '{"rows": 20000000}' http://127.0.0.1:8080/reports    # 202, Location: /jobs/{id}
//	curl http://127.0.0.1:8080/jobs/{id}
//	curl http://127.0.0.1:8080/metrics
//
// The reports' jobs are kept in JetStream (in -store): a report asked for
// while no worker service runs waits for one, across restarts of either.
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
// "none" for no wait) before it exits. A worker service stopped with
// SIGTERM drains the same way, and hands back the jobs it can't finish.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/offloadgo/offload/natsjobs"
	"github.com/offloadgo/offload/natsremote"
)

func main() {
	natsremote.Main() // first: in a worker process or as a node, serve and never return

	var c config
	flag.StringVar(&c.role, "role", "api", `"api": serve HTTP; "worker": run the reports' jobs`)
	flag.StringVar(&c.addr, "addr", "127.0.0.1:8080", "address to listen on")
	flag.IntVar(&c.workers, "workers", 2, "tasks (or jobs) run at once")
	flag.StringVar(&c.natsURL, "nats", "", `the API: run tasks on worker nodes through this NATS server ("embedded": one in this process), which also keeps the reports; default: worker processes here, and a NATS server in this process for the reports. A worker: the NATS server to take jobs from; default: the API's on this machine`)
	flag.IntVar(&c.natsPort, "nats-port", 4222, "port of the NATS server in the API process, on 127.0.0.1 (0: any)")
	flag.StringVar(&c.storeDir, "store", filepath.Join(os.TempDir(), "offload-example-service"), "where the NATS server in the API process keeps the reports' jobs")
	flag.DurationVar(&c.deadline, "deadline", 10*time.Second, "how long a /hash request's task may take, queued and running")
	flag.Parse()

	var err error
	switch c.role {
	case "api":
		err = run(c)
	case "worker":
		url := c.natsURL
		if url == "" || url == "embedded" {
			url = fmt.Sprintf("nats://127.0.0.1:%d", c.natsPort)
		}
		err = runWorker(url, c.workers)
	default:
		err = fmt.Errorf("-role %q: want api or worker", c.role)
	}
	if err != nil {
		log.Fatal(err)
	}
}

// config is the command's flags.
type config struct {
	role     string
	addr     string
	workers  int
	natsURL  string
	natsPort int
	storeDir string
	deadline time.Duration
}

// run serves the API until SIGINT or SIGTERM, then lets the requests in
// flight finish.
func run(c config) error {
	natsURL := c.natsURL
	if natsURL == "" {
		natsURL = "embedded" // for the reports only
	}
	nc, closeNATS, err := connectNATS(natsURL, c.natsPort, c.storeDir)
	if err != nil {
		return err
	}
	defer closeNATS()
	var nodes *nats.Conn // nil: /hash runs in worker processes here
	if c.natsURL != "" {
		nodes = nc
	}
	p, err := newPool(c.workers, nodes)
	if err != nil {
		return err
	}
	defer p.Close()
	opening, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	q, err := natsjobs.Open(opening, nc, natsjobs.Options{Name: reportsQueue})
	cancel()
	if err != nil {
		return err
	}
	defer q.Close()

	metrics, err := metricsHandler(p)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle("POST /hash", hashHandler(p, c.deadline))
	mux.Handle("POST /reports", reportsHandler(q, reportWait))
	mux.Handle("GET /jobs/{id}", natsjobs.StatusHandler(q))
	mux.Handle("GET /metrics", metrics)

	ln, err := net.Listen("tcp", c.addr)
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
	ctx, cancel = context.WithTimeout(context.Background(), c.deadline+5*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return p.Shutdown(ctx)
}
