package testkit

import (
	"bytes"
	"os"
	"runtime"
	"strconv"
)

// ProcState is process pid's state letter as Linux's /proc/<pid>/stat
// says it ('R', 'S', 'T' stopped, 'Z' zombie, 'X' dead ...); ok is false
// where that cannot be read: no such process, or not Linux.
func ProcState(pid int) (state byte, ok bool) {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	// The state follows the command's name, in parentheses.
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 || i+2 >= len(stat) {
		return 0, false
	}
	return stat[i+2], true
}

// ProcessExited reports whether process pid has ended, reaped or not: a
// zombie counts as ended (as a worker's grandchild left to a container's
// init, which may never reap it). Off Linux a zombie cannot be told from a
// live process, so there it is ProcessReaped.
func ProcessExited(pid int) bool {
	if runtime.GOOS != "linux" {
		return ProcessReaped(pid)
	}
	state, ok := ProcState(pid)
	if !ok {
		_, err := os.Stat("/proc/" + strconv.Itoa(pid))
		return err != nil // gone, not merely unparsable
	}
	return state == 'Z' || state == 'X'
}
