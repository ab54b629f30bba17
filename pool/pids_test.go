package pool_test

import "os"

// killPID kills process pid, as a crash or the OOM killer would, behind
// the pool's back (os.Process.Kill: SIGKILL on Unix).
func killPID(pid int) error {
	proc, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	defer proc.Release()
	return proc.Kill()
}
