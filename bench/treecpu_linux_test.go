package bench

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// treeCPU returns the CPU time this process and its live child processes
// (a Subprocess pool's workers) have run so far: the parent's and the
// workers' work together, which a busy machine does not blur as it blurs
// wall time.
func treeCPU(tb testing.TB) (time.Duration, bool) {
	total := processCPU(tb, 0)
	me := os.Getpid()
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, path := range stats {
		b, err := os.ReadFile(path)
		if err != nil {
			continue // gone meanwhile
		}
		// pid (comm) state ppid ...: comm may hold spaces and parentheses.
		fields := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		if len(fields) < 2 || fields[1] != strconv.Itoa(me) {
			continue
		}
		pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(path)))
		total += processCPU(tb, pid)
	}
	return total, true
}

// processCPU reads the CPU clock of process pid (0: this one); a process
// that has exited meanwhile counts nothing.
func processCPU(tb testing.TB, pid int) time.Duration {
	clock := int32(unix.CLOCK_PROCESS_CPUTIME_ID)
	if pid != 0 {
		clock = int32((^pid)<<3 | 2) // the kernel's CPUCLOCK_SCHED clock of a whole process
	}
	var ts unix.Timespec
	if err := unix.ClockGettime(clock, &ts); err != nil {
		if pid == 0 {
			tb.Fatalf("process CPU clock: %v", err)
		}
		return 0
	}
	return time.Duration(ts.Nano())
}

// calibrationClock is the CPU time of the calling thread.
func calibrationClock() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		panic("bench: thread CPU clock: " + err.Error()) // Linux has it
	}
	return time.Duration(ts.Nano())
}
