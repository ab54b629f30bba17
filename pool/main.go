package pool

import (
	"fmt"
	"os"

	"github.com/offloadgo/offload/internal/seam"
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
// In a process started as a pool's worker (which runs with the
// GOMAXPROCS its pool asks for: see SubprocessOptions.GOMAXPROCS), Main
// serves the registered tasks and never returns: the process exits when its pool closes the
// channel or dies. In any other process Main returns at once, having done
// nothing but read environment variables. A worker that cannot reach its
// pool prints why to stderr and exits with status 2.
//
// A binary that may also run as a worker node of Remote pools calls
// natsremote.Main instead, which does what Main does and then serves as a
// node when OFFLOAD_NATS_URL is set. Main refuses to run with that
// variable set — it says to call natsremote.Main, and exits with status 2 —
// rather than go on as if no node had been asked for.
//
// opts, at most one (more panics), configures the worker's side: with a
// Tracer, each task continues the trace its caller's pool sent with it
// (see Options.Tracer). Main takes it as an argument, not from a global,
// because in a worker process Main runs before anything else in main.
func Main(opts ...MainOptions) {
	o := mainOptions(opts)
	if code, worker := subproc.ServeWorker(o.extractor()); worker {
		os.Exit(code)
	}
	if os.Getenv(seam.EnvNodeURL) != "" {
		fmt.Fprintln(os.Stderr, "pool: "+seam.EnvNodeURL+" is set, which asks this binary to serve as a worker node, "+
			"but it called pool.Main: call natsremote.Main() instead (it does what pool.Main does, then serves as a node)")
		os.Exit(2)
	}
}
