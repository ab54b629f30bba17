//go:build linux && !offload_portable

package workerproc

import (
	"os"
	"os/exec"
	"os/signal"
	"syscall"

	"golang.org/x/sys/unix"
)

// On Linux the kernel tells the worker that its supervisor died: Pdeathsig.

// dieWithParent puts the worker in a process group of its own and has the
// kernel send it SIGTERM when the supervisor dies. SIGTERM rather than
// SIGKILL, since SIGKILL cannot be caught: the worker's Attach handles
// SIGTERM by killing its group, and before Attach SIGTERM's default kills
// it all the same. Pdeathsig fires when the thread that forked exits, not
// the process; Go ends a thread only when a goroutine exits while locked
// to it, so do not call Start from a goroutine that stays locked to it.
// There is no lifeline to hold: both files are nil.
func dieWithParent(cmd *exec.Cmd) (lifeline, give *os.File, err error) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	return nil, nil, nil
}

// watchParent answers SIGTERM, the worker's parent-death signal, with
// SIGKILL to the calling process's group, the caller included, if it leads
// that group; otherwise SIGTERM's default action ends the worker alone.
func watchParent(leader bool) error {
	if !leader {
		return nil
	}
	term := make(chan os.Signal, 1)
	signal.Notify(term, unix.SIGTERM)
	go func() {
		<-term
		unix.Kill(0, unix.SIGKILL)
	}()
	return nil
}
