//go:build darwin || freebsd || netbsd || openbsd

package workerproc

import (
	"errors"
	"fmt"
	"syscall"

	"golang.org/x/sys/unix"
)

// waitExited blocks until the child pid has exited, leaving it unreaped:
// a kqueue's EVFILT_PROC NOTE_EXIT fires at the exit, and the zombie stays
// for cmd.Wait. (macOS's waitid with WNOWAIT is unreliable, golang/go#19314,
// and the BSDs' wait6 is not in x/sys everywhere; kqueue is on all of
// them.) A child that has already exited is a zombie, which EVFILT_PROC
// refuses with ESRCH: that too means it exited.
func waitExited(pid int) error {
	syscall.ForkLock.RLock()
	kq, err := unix.Kqueue()
	if err == nil {
		unix.CloseOnExec(kq)
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		return fmt.Errorf("workerproc: kqueue: %w", err)
	}
	defer unix.Close(kq)
	var change, event [1]unix.Kevent_t
	unix.SetKevent(&change[0], pid, unix.EVFILT_PROC, unix.EV_ADD|unix.EV_ONESHOT)
	change[0].Fflags = unix.NOTE_EXIT
	for {
		n, err := unix.Kevent(kq, change[:], event[:], nil)
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.ESRCH):
			return nil
		case err != nil:
			return fmt.Errorf("workerproc: kevent: %w", err)
		case n == 0:
			continue
		}
		if event[0].Flags&unix.EV_ERROR != 0 {
			if errno := unix.Errno(event[0].Data); errno != unix.ESRCH {
				return fmt.Errorf("workerproc: kevent: %w", errno)
			}
		}
		return nil
	}
}
