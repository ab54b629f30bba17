package main

import (
	"errors"
	"fmt"
	"log/slog"
	"os/exec"
	"time"

	"github.com/offloadgo/offload/pool"
)

// memoryLimit caps each Python worker and what it starts: an image that
// decodes to more (a small PNG of a huge image) kills its worker, fails
// its request, and leaves the others alone.
const memoryLimit = 256 << 20

// newPool makes a pool of workers Python processes running script with
// python, each request waiting behind at most one other per worker; the
// pool and the workers' output log to logger (nil: slog.Default()).
// MemoryLimit is Linux-only: elsewhere the pool runs without one, and
// says so in the log.
func newPool(python, script string, workers int, logger *slog.Logger) (*pool.Pool, error) {
	python, err := exec.LookPath(python)
	if err != nil {
		return nil, fmt.Errorf("pyworker: the workers need Python 3: %w", err)
	}
	opts := pool.Options{
		Workers:    workers,
		MinWorkers: workers, // started now: no request waits for Python to start
		MaxQueue:   workers, // bounded: the rest are shed with 503
		Isolation:  pool.Subprocess,
		Logger:     logger,
		Subprocess: pool.SubprocessOptions{
			Command: []string{python, script},
			// A task past its deadline gets Cancelled raised in it; if it
			// has not returned after this grace (it is stuck in C code,
			// say), its process group is killed and the worker replaced.
			TerminateGrace: 100 * time.Millisecond,
			MemoryLimit:    memoryLimit,
		},
	}
	p, err := pool.New(opts)
	if errors.Is(err, errors.ErrUnsupported) && opts.Subprocess.MemoryLimit != 0 {
		if logger == nil {
			logger = slog.Default()
		}
		logger.Warn("no memory limit for the workers", "err", err)
		opts.Subprocess.MemoryLimit = 0
		p, err = pool.New(opts)
	}
	return p, err
}
