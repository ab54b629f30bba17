//go:build freebsd || netbsd

package workerproc

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// writev is writev(2), which x/sys/unix does not wrap on FreeBSD and
// NetBSD. Empty slices are left out (a nil Base is not allowed).
func writev(fd int, bufs [][]byte) (int, error) {
	var iov [2]unix.Iovec
	n := 0
	for _, b := range bufs {
		if len(b) == 0 {
			continue
		}
		iov[n].Base = &b[0]
		iov[n].SetLen(len(b))
		n++
	}
	r, _, e := unix.Syscall(unix.SYS_WRITEV, uintptr(fd), uintptr(unsafe.Pointer(&iov[0])), uintptr(n))
	if e != 0 {
		return 0, e
	}
	return int(r), nil
}
