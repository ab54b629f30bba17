//go:build unix

package workerproc

import (
	"errors"
	"os"
	"os/signal"

	"golang.org/x/sys/unix"
)

// A worker runs in a process group of its own (Setpgid, so the group's id
// is its pid). The reaper kills the group between the worker's exit and
// its reap; Attach's SIGTERM handler kills it at the supervisor's death.

// waitExited blocks until the child pid has exited, leaving it unreaped.
func waitExited(pid int) error {
	for {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}

// killGroup sends SIGKILL to the worker's process group, whose id is the
// worker's pid (Setpgid). Call it only between the exit and the reap.
func (p *Process) killGroup() {
	err := unix.Kill(-p.PID(), unix.SIGKILL)
	if err != nil && !errors.Is(err, unix.ESRCH) { // ESRCH: nobody is left in it
		p.log.Warn("workerproc: cannot kill the worker's process group", "err", err)
	}
}

// killGroupOnSIGTERM answers SIGTERM, the worker's parent-death signal,
// with SIGKILL to the calling process's group, the caller included.
func killGroupOnSIGTERM() {
	term := make(chan os.Signal, 1)
	signal.Notify(term, unix.SIGTERM)
	go func() {
		<-term
		unix.Kill(0, unix.SIGKILL)
	}()
}
