//go:build unix && !netbsd

package orders

import "golang.org/x/sys/unix"

// clockProcessCPU is the process CPU-time clock's id.
const clockProcessCPU = unix.CLOCK_PROCESS_CPUTIME_ID
