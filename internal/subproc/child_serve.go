package subproc

import (
	"context"
	"fmt"
	"os"

	"github.com/offloadgo/offload/internal/registry"
	"github.com/offloadgo/offload/internal/workerproc"
)

// ServeWorker makes this process a pool's worker if it was started as one:
// it attaches to its pool, serves the registered tasks until the pool
// closes the channel or dies, and returns the process's exit status with
// worker true. In any other process it returns at once, worker false,
// having done nothing but read an environment variable. A worker runs
// with the GOMAXPROCS its pool asks for (see maxProcsEnv), and puts the
// variable back as its pool had it before it serves, and at the nice value
// its pool asks for (see applyNice). A worker that cannot
// reach its pool prints why to stderr and returns status 2.
// extract, if not nil, gives each task the trace context its call carries.
func ServeWorker(extract Extract) (code int, worker bool) {
	conn, worker, err := workerproc.Attach()
	if !worker {
		return 0, false
	}
	if err == nil {
		err = restoreMaxProcsEnv()
	}
	if err == nil {
		err = applyNice()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "pool: worker:", err)
		return 2, true
	}
	return Serve(conn, extract), true
}

// Serve sends the hello, then runs the calls conn brings until it reaches
// EOF, and returns the process's exit status. It returns at once at EOF,
// without waiting for tasks still running: the pool has gone.
func Serve(conn *workerproc.Conn, extract Extract) int {
	if err := conn.SendHello(workerproc.Hello{Tasks: registry.Names()}); err != nil {
		fmt.Fprintln(os.Stderr, "pool: worker:", err)
		return 2
	}
	s := newServer(conn)
	s.extract = extract
	s.read()
	return <-s.exit
}

// Extract returns ctx with the trace context carrier holds (the pool's
// Tracer.Extract).
type Extract func(ctx context.Context, carrier map[string]string) context.Context
