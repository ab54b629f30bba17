//go:build darwin || freebsd || netbsd || openbsd

package workerproc

import (
	"errors"
	"fmt"
	"runtime"
)

// macOS and the BSDs cannot sample another process's RSS through x/sys
// without cgo, nor so its descendants' (the tree walk and the Pss of
// memtree_linux.go are /proc's): macOS's kinfo_proc leaves its memory fields empty (the
// figure is behind proc_pidinfo, a libproc call), the BSDs' kinfo_proc
// layouts are not in x/sys, and setrlimit is no substitute (RLIMIT_RSS is
// not enforced, RLIMIT_DATA and RLIMIT_AS don't bound Go's mmap'd heap
// alone, or break it). So a MemoryLimit is refused rather than ignored.

var errMemoryLimit = fmt.Errorf("workerproc: a worker MemoryLimit is not supported on %s "+
	"(it samples the memory of the worker and its descendants, which only Linux's /proc gives without cgo): %w", runtime.GOOS, errors.ErrUnsupported)

// memoryLimitSupport says whether Spec.MemoryLimit can be enforced here.
func memoryLimitSupport() error { return errMemoryLimit }

// RSS fails: see errMemoryLimit.
func (p *Process) RSS() (int64, error) { return 0, errMemoryLimit }

// watchMemory never runs: Start refuses a MemoryLimit here.
func (p *Process) watchMemory() {}
