//go:build unix && !linux

package subproc

import "golang.org/x/sys/unix"

// raiseNice sets this process's nice value to its own plus n (at most
// MaxNice). Off Linux a nice value is the whole process's.
func raiseNice(n int) error {
	self, err := unix.Getpriority(unix.PRIO_PROCESS, 0)
	if err != nil {
		return err
	}
	return unix.Setpriority(unix.PRIO_PROCESS, 0, min(self+n, MaxNice))
}
