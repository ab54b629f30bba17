package cpuclock

import (
	"errors"
	"time"

	"golang.org/x/sys/windows"
)

// Fine reports whether both clocks count finer than a scheduler tick:
// Windows counts process times in ticks of about 15.6 ms, and has no
// per-thread clock with more resolution.
const Fine = false

// Process returns the process's kernel and user time, all threads, in
// scheduler ticks: per-op figures from it are coarse.
func Process() (time.Duration, error) {
	var creation, exit, kernel, user windows.Filetime
	if err := windows.GetProcessTimes(windows.CurrentProcess(), &creation, &exit, &kernel, &user); err != nil {
		return 0, err
	}
	ticks := func(f windows.Filetime) int64 { return int64(f.HighDateTime)<<32 | int64(f.LowDateTime) }
	return time.Duration(ticks(kernel)+ticks(user)) * 100, nil // 100 ns units
}

// Thread is not measured on Windows.
func Thread() (time.Duration, error) {
	return 0, errors.ErrUnsupported
}
