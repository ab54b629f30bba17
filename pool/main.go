package pool

import (
	"os"

	"github.com/offloadgo/offload/internal/subproc"
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
	if code, worker := subproc.ServeWorker(); worker {
		os.Exit(code)
	}
}
