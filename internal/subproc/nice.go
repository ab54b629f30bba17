package subproc

import (
	"fmt"
	"os"
	"strconv"

	"github.com/offloadgo/offload/internal/workerproc"
)

// A pool can ask its worker processes to run at a lower CPU priority
// (Options.Nice), so that a burst of jobs in them leaves the cores to the
// service's own request path first, as piscina's niceIncrement does for
// worker threads. The worker applies it itself, first thing in Main: a
// Go process has several threads by then, and on Linux a nice value
// belongs to a thread, so only the process can reach all of its own.
// envNice carries the increment; its prefix has the supervisor drop it
// from what a worker's own workers inherit.
const envNice = workerproc.EnvWorker + "_NICE"

// MaxNice is the largest nice value, and so the largest useful increment.
const MaxNice = 19

// niceEnv returns the entry of a worker's environment that asks for
// increment n, Options.Nice; none for 0.
func niceEnv(n int) []string {
	if n == 0 {
		return nil
	}
	return []string{envNice + "=" + strconv.Itoa(n)}
}

// applyNice raises this worker process's nice value by the increment its
// pool asked for, if any, up to MaxNice, and drops the variable so that
// the task and its children don't see it (they inherit the nice value).
func applyNice() error {
	v, ok := os.LookupEnv(envNice)
	if !ok {
		return nil
	}
	os.Unsetenv(envNice)
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > MaxNice {
		return fmt.Errorf("bad %s=%q", envNice, v)
	}
	if err := raiseNice(n); err != nil {
		return fmt.Errorf("raising the nice value by %d: %w", n, err)
	}
	return nil
}
