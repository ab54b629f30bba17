package subproc

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/offloadgo/offload/internal/workerproc"
)

// A worker process runs one task at a time, so a full runtime of
// GOMAXPROCS = the core count in each of them mostly buys idle Ps, more
// threads and more memory, and GC workers that compete with the pool's
// other workers for the same cores: on 16 cores, worker processes given
// GOMAXPROCS=1 closed a third of the gap between a Subprocess pool and an
// InProcess one (issue 23). So the pool asks each worker for a small
// GOMAXPROCS, unless the user says otherwise.

// The worker gets the GOMAXPROCS variable itself, so that its runtime
// starts with that many Ps rather than shrinking to them in Main (which
// cost an idle worker a third of a MiB more than it saved). Main then
// puts the variable back as the pool's environment had it, so that the
// task, and the programs it starts, see the environment they would have
// seen: envMaxProcsWas carries that value, "set:" and the value, or
// "unset". Its prefix has the supervisor drop it from what a worker's own
// workers inherit.
const envMaxProcsWas = workerproc.EnvWorker + "_GOMAXPROCS_WAS"

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
	was, set := os.LookupEnv("GOMAXPROCS")
	switch {
	case n == 0 && set, n <= runtimeMaxProcs:
		return nil
	case n == 0:
		n = defaultMaxProcs
	}
	if set {
		was = "set:" + was
	} else {
		was = "unset"
	}
	return []string{"GOMAXPROCS=" + strconv.Itoa(n), envMaxProcsWas + "=" + was}
}

// restoreMaxProcsEnv puts the GOMAXPROCS variable back as the pool's
// environment had it, if the pool set it for this worker; the runtime
// read it at start and keeps its value.
func restoreMaxProcsEnv() error {
	was, ok := os.LookupEnv(envMaxProcsWas)
	if !ok {
		return nil
	}
	os.Unsetenv(envMaxProcsWas)
	switch value, set := strings.CutPrefix(was, "set:"); {
	case set:
		return os.Setenv("GOMAXPROCS", value)
	case was == "unset":
		return os.Unsetenv("GOMAXPROCS")
	}
	return fmt.Errorf("bad %s=%q", envMaxProcsWas, was)
}
