package pool

import (
	"fmt"
	"os"

	"github.com/offloadgo/offload/internal/nodehook"
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
// channel or dies.
//
// Main also makes the program a worker node of Remote pools: when the
// environment variable OFFLOAD_NATS_URL is set (see package natsremote
// for it and the others), Main serves the registered tasks to the pools
// of that NATS server until the process gets SIGINT or SIGTERM, then
// exits. A node binary must import natsremote (a blank import will do);
// without it Main says so on stderr and exits with status 2.
//
// In any other process Main returns at once, having done nothing but
// read environment variables. A worker that cannot reach its pool prints
// why to stderr and exits with status 2.
func Main() {
	if code, worker := subproc.ServeWorker(); worker {
		os.Exit(code)
	}
	if os.Getenv(nodehook.EnvURL) != "" {
		if nodehook.Serve == nil {
			fmt.Fprintln(os.Stderr, "pool: "+nodehook.EnvURL+" is set, but this binary does not import "+
				"github.com/offloadgo/offload/natsremote, which serves as a worker node")
			os.Exit(2)
		}
		os.Exit(nodehook.Serve())
	}
}
