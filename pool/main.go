package pool

import (
	"fmt"
	"os"

	"github.com/offloadgo/offload/internal/workerproc"
)

// Main makes the program a worker for Subprocess pools. Call it first thing
// in main, and in TestMain for tests that use Subprocess pools:
//
//	func main() {
//		pool.Main()
//		...
//	}
//
// In a process started as a pool's worker, Main serves the registered
// tasks and never returns: the process exits when its pool closes the
// channel or dies. In any other process it returns at once, having done
// nothing but read an environment variable. A worker that cannot reach its
// pool prints why to stderr and exits with status 2.
func Main() {
	conn, worker, err := workerproc.Attach()
	if !worker {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "pool: worker:", err)
		os.Exit(2)
	}
	os.Exit(serve(conn))
}

// serve sends the hello, then runs the calls conn brings until it reaches
// EOF, and returns the process's exit status. It returns at once at EOF,
// without waiting for tasks still running: the pool has gone.
func serve(conn *workerproc.Conn) int {
	if err := conn.SendHello(workerproc.Hello{Tasks: registeredNames()}); err != nil {
		fmt.Fprintln(os.Stderr, "pool: worker:", err)
		return 2
	}
	s := newServer(conn)
	s.read()
	return <-s.exit
}
