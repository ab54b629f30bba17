//go:build unix && !linux

package subproc

import "golang.org/x/sys/unix"

// raiseNice sets this process's nice value to its own plus n (at most
// MaxNice).
func raiseNice(n int) error { return raiseNiceOf(0, n) }

// raiseNiceOf sets process pid's (0: this one's) nice value to its own
// plus n (at most MaxNice). Off Linux a nice value is the whole
// process's.
func raiseNiceOf(pid, n int) error {
	self, err := unix.Getpriority(unix.PRIO_PROCESS, pid)
	if err != nil {
		return err
	}
	return unix.Setpriority(unix.PRIO_PROCESS, pid, min(self+n, MaxNice))
}
