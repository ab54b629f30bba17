//go:build unix

package cpuclock

import (
	"time"

	"golang.org/x/sys/unix"
)

// Fine reports whether both clocks count finer than a scheduler tick:
// on every Unix they do.
const Fine = true

// Process returns the CPU time of the whole process, all threads.
func Process() (time.Duration, error) { return read(clockProcess) }

// Thread returns the calling thread's CPU time; callers lock the
// goroutine to its thread around a measurement.
func Thread() (time.Duration, error) { return read(clockThread) }

func read(id int32) (time.Duration, error) {
	var ts unix.Timespec
	if err := unix.ClockGettime(id, &ts); err != nil {
		return 0, err
	}
	return time.Duration(ts.Nano()), nil
}
