package orders

// clockProcessCPU is the process CPU-time clock's id from NetBSD's
// <time.h>, which golang.org/x/sys/unix does not define for NetBSD.
const clockProcessCPU = 0x40000000
