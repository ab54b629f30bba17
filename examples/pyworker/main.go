// Command pyworker is an HTTP service whose work is done in Python:
// POST /thumb scales the posted PNG down to a thumbnail in a pool of
// Python worker processes (worker.py, standard library only), with a
// deadline per request and a memory limit per worker, behind Shed.
//
//	go run ./examples/pyworker
//	curl --data-binary @picture.png -o thumb.png 'http://127.0.0.1:8080/thumb?width=128'
//
// Answers: 200 with the thumbnail; 400 for a bad width; 413 for a body
// over 8 MiB; 422 for bytes the worker can't read as a PNG; 503 with
// Retry-After when the pool is full; 504 past the deadline; 502 when a
// worker died under the request (a PNG that decodes to more than the
// memory limit, say); 500 for another exception in the worker.
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
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "address to listen on")
	workers := flag.Int("workers", 2, "Python worker processes")
	python := flag.String("python", "python3", "the Python 3 interpreter")
	deadline := flag.Duration("deadline", 10*time.Second, "how long a request may take, queued and running")
	flag.Parse()
	if err := run(*addr, *python, *workers, *deadline); err != nil {
		log.Fatal(err)
	}
}

// run serves until SIGINT or SIGTERM, then lets the requests in flight
// finish.
func run(addr, python string, workers int, deadline time.Duration) error {
	dir, err := os.MkdirTemp("", "pyworker-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	script, err := writeWorker(dir)
	if err != nil {
		return err
	}
	p, err := newPool(python, script, workers, nil)
	if err != nil {
		return err
	}
	defer p.Close()

	mux := http.NewServeMux()
	mux.Handle("POST /thumb", thumbHandler(p, deadline))
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
