package cpuclock

// The CPU-time clocks' ids from NetBSD's <time.h>, which
// golang.org/x/sys/unix does not define for NetBSD.
const (
	clockProcess = 0x40000000
	clockThread  = 0x20000000
)
