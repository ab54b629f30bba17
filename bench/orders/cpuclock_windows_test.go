package orders

import (
	"time"

	"golang.org/x/sys/windows"
)

// processCPUTime reads the process's kernel and user time, all threads.
// Windows counts it in scheduler ticks (about 15.6 ms), so per-op CPU
// figures are coarse there.
func processCPUTime() (time.Duration, error) {
	var creation, exit, kernel, user windows.Filetime
	if err := windows.GetProcessTimes(windows.CurrentProcess(), &creation, &exit, &kernel, &user); err != nil {
		return 0, err
	}
	ticks := func(f windows.Filetime) int64 { return int64(f.HighDateTime)<<32 | int64(f.LowDateTime) }
	return time.Duration(ticks(kernel)+ticks(user)) * 100, nil // 100 ns units
}
