//go:build unix

package cancel

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// signalName names s as the kernel does: SIGSEGV, SIGKILL.
func signalName(s syscall.Signal) string {
	if name := unix.SignalName(s); name != "" {
		return name
	}
	return s.String()
}
