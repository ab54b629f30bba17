//go:build unix

package testkit

import "syscall"

// ProcessReaped reports whether no process pid exists any more: it has
// exited and been reaped (a zombie still exists). Signal 0 checks without
// sending anything.
func ProcessReaped(pid int) bool { return syscall.Kill(pid, 0) != nil }
