//go:build unix

package orders

import (
	"time"

	"golang.org/x/sys/unix"
)

// processCPUTime reads the process's CPU clock, all threads.
func processCPUTime() (time.Duration, error) {
	var ts unix.Timespec
	if err := unix.ClockGettime(clockProcessCPU, &ts); err != nil {
		return 0, err
	}
	return time.Duration(ts.Nano()), nil
}
