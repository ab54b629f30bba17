package pool_test

import "os"

// processGone reports whether no process pid exists any more: on Windows,
// whether it can no longer be opened.
func processGone(pid int) bool {
	proc, err := os.FindProcess(pid)
	if err != nil {
		return true
	}
	proc.Release()
	return false
}
