package chunking

// The CPU-time clocks' ids from NetBSD's <time.h>, which
// golang.org/x/sys/unix does not define for NetBSD.
const (
	clockProcessCPU = 0x40000000
	clockThreadCPU  = 0x20000000
)
