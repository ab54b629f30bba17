//go:build unix && !netbsd

package cpuclock

import "golang.org/x/sys/unix"

const (
	clockProcess = unix.CLOCK_PROCESS_CPUTIME_ID
	clockThread  = unix.CLOCK_THREAD_CPUTIME_ID
)
