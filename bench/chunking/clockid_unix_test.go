//go:build unix && !netbsd

package chunking

import "golang.org/x/sys/unix"

// The CPU-time clocks' ids.
const (
	clockProcessCPU = unix.CLOCK_PROCESS_CPUTIME_ID
	clockThreadCPU  = unix.CLOCK_THREAD_CPUTIME_ID
)
