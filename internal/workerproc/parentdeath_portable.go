//go:build darwin || freebsd || netbsd || openbsd || (linux && offload_portable)

package workerproc

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// Off Linux there is no Pdeathsig (FreeBSD's procctl has one, macOS has
// none): the worker learns that its supervisor died from a lifeline, a
// pipe whose write end only the supervisor holds (close-on-exec, so no
// other child inherits it). Nobody writes to it; the worker's read returns
// EOF once the supervisor is gone, whether it exited, crashed or was
// killed, since the kernel closes a dead process's descriptors.

// lifelineFD is the worker's read end of the lifeline, after the channel's
// three descriptors.
const lifelineFD = 6

// dieWithParent puts the worker in a process group of its own and hands it
// the lifeline's read end as fd 6. The caller keeps lifeline open while
// the worker lives and closes give once the worker has started.
func dieWithParent(cmd *exec.Cmd) (lifeline, give *os.File, err error) {
	if n := len(cmd.ExtraFiles); 3+n != lifelineFD {
		return nil, nil, fmt.Errorf("workerproc: the lifeline must be fd %d, not %d", lifelineFD, 3+n)
	}
	give, lifeline, err = os.Pipe()
	if err != nil {
		return nil, nil, fmt.Errorf("workerproc: lifeline pipe: %w", err)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.ExtraFiles = append(cmd.ExtraFiles, give)
	cmd.Env = append(cmd.Env, EnvLifeline+"="+strconv.Itoa(lifelineFD))
	return lifeline, give, nil
}

// watchParent starts a goroutine that waits for EOF on the lifeline and
// then sends SIGKILL to the calling process's group, the caller included,
// if it leads that group, or to the caller alone otherwise. The read goes
// through Go's poller: it holds no thread.
func watchParent(leader bool) error {
	if err := claimFD(lifelineFD, unix.S_IFIFO); err != nil {
		return err
	}
	if err := unix.SetNonblock(lifelineFD, true); err != nil {
		return fmt.Errorf("workerproc: lifeline (fd %d): %w", lifelineFD, err)
	}
	f := os.NewFile(uintptr(lifelineFD), "offload-supervisor-lifeline")
	go func() {
		var b [1]byte
		for {
			if _, err := f.Read(b[:]); err != nil {
				break // EOF: the supervisor is gone
			}
		}
		if leader {
			unix.Kill(0, unix.SIGKILL)
		}
		unix.Kill(os.Getpid(), unix.SIGKILL)
	}()
	return nil
}
