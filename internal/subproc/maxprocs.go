package subproc

import (
	"fmt"
	"os"
	"runtime"
	"strconv"

	"github.com/offloadgo/offload/internal/workerproc"
)

// A worker process runs one task at a time, so a full runtime of
// GOMAXPROCS = the core count in each of them mostly buys idle Ps, more
// threads and more memory, and GC workers that compete with the pool's
// other workers for the same cores: on 16 cores, worker processes given
// GOMAXPROCS=1 closed a third of the gap between a Subprocess pool and an
// InProcess one (issue 23). So the pool asks each worker for a small
// GOMAXPROCS, unless the user says otherwise.

// envMaxProcs carries the GOMAXPROCS a worker process sets for itself. It
// is not GOMAXPROCS itself, which would reach the task's environment and
// every program the task starts; its prefix has the supervisor drop it
// from what a worker's own workers inherit.
const envMaxProcs = workerproc.EnvWorker + "_GOMAXPROCS"

// defaultMaxProcs is a worker process's GOMAXPROCS when neither
// Options.GOMAXPROCS nor the pool's environment sets one.
const defaultMaxProcs = 1

// runtimeMaxProcs, as Options.GOMAXPROCS, leaves worker processes the Go
// runtime's own default.
const runtimeMaxProcs = -1

// maxProcsEnv returns the entries of a worker's environment that set its
// GOMAXPROCS for n, Options.GOMAXPROCS: n if positive; if 0, the default
// unless the pool's environment sets GOMAXPROCS, which the worker then
// inherits as it is; nothing for runtimeMaxProcs.
func maxProcsEnv(n int) []string {
	if n == 0 {
		if _, set := os.LookupEnv("GOMAXPROCS"); set {
			return nil
		}
		n = defaultMaxProcs
	}
	if n < 0 {
		return nil
	}
	return []string{envMaxProcs + "=" + strconv.Itoa(n)}
}

// applyMaxProcs sets this worker process's GOMAXPROCS as its pool asked,
// if it did, and unsets the request so that programs the task starts do
// not inherit it.
func applyMaxProcs() error {
	v, ok := os.LookupEnv(envMaxProcs)
	if !ok {
		return nil
	}
	os.Unsetenv(envMaxProcs)
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return fmt.Errorf("bad %s=%q", envMaxProcs, v)
	}
	runtime.GOMAXPROCS(n)
	return nil
}
