//go:build unix

package pool_test

import "syscall"

// processGone reports whether no process pid exists any more (signal 0
// checks without sending anything).
func processGone(pid int) bool { return syscall.Kill(pid, 0) != nil }
