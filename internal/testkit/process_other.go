//go:build !unix

package testkit

import "os"

// ProcessReaped reports whether no process pid exists any more: here,
// whether it can no longer be opened.
func ProcessReaped(pid int) bool {
	proc, err := os.FindProcess(pid)
	if err != nil {
		return true
	}
	_ = proc.Release()
	return false
}
