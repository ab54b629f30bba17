//go:build linux || darwin || freebsd || netbsd || openbsd

package workerproc

import (
	"errors"

	"golang.org/x/sys/unix"
)

// A worker runs in a process group of its own (Setpgid, so the group's id
// is its pid). The reaper kills the group between the worker's exit and
// its reap (waitExited, the platform's, waits for the exit without
// reaping); at the supervisor's death Attach's SIGTERM handler (Linux) or
// parent-death watch (elsewhere) kills it.

// killGroup sends SIGKILL to the worker's process group, whose id is the
// worker's pid (Setpgid). Call it only between the exit and the reap.
func (p *Process) killGroup() {
	err := unix.Kill(-p.PID(), unix.SIGKILL)
	if err != nil && !errors.Is(err, unix.ESRCH) { // ESRCH: nobody is left in it
		p.log.Warn("workerproc: cannot kill the worker's process group", "err", err)
	}
}
