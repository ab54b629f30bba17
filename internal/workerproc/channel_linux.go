//go:build linux && !offload_portable

package workerproc

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Linux's channel: pipes, a SOCK_SEQPACKET socket for descriptors and a
// SOCK_STREAM socket for bulk bodies, made close-on-exec atomically, an
// eventfd to wake waiters, and pipes grown to pipeSize.
// channel_portable.go holds what the other Unixes (and Linux built with
// the offload_portable tag) use instead.

// pipeSize is the pipe capacity asked for (best effort): larger than the
// default 64 KiB so that bulk frames take fewer wake-ups.
const pipeSize = 1 << 20

func newChannel() (channel, error) {
	var ch channel
	var down, up [2]int // parent to child, child to parent
	if err := unix.Pipe2(down[:], unix.O_CLOEXEC); err != nil {
		return ch, fmt.Errorf("workerproc: pipe: %w", err)
	}
	if err := unix.Pipe2(up[:], unix.O_CLOEXEC); err != nil {
		closeFDs(down[:])
		return ch, fmt.Errorf("workerproc: pipe: %w", err)
	}
	sock, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		closeFDs(append(down[:], up[:]...))
		return ch, fmt.Errorf("workerproc: socketpair: %w", err)
	}
	bulk, err := newBulkSocket()
	if err != nil {
		closeFDs(append(append(down[:], up[:]...), sock[:]...))
		return ch, err
	}
	ch.parent = []int{up[0], down[1], sock[0], bulk[0]}
	ch.child = []int{down[0], up[1], sock[1], bulk[1]}
	return ch, nil
}

// The channel's descriptors in the worker, in exec.Cmd.ExtraFiles order,
// and the kind each must be: the pipe it reads frames from, the pipe it
// writes frames to, the socket for file descriptors, the bulk socket.
var (
	workerFDs     = []int{3, 4, 5, 6}
	workerFDKinds = []uint32{unix.S_IFIFO, unix.S_IFIFO, unix.S_IFSOCK, unix.S_IFSOCK}
)

// newBulkSocket returns the socketpair that carries bodies of bulkMin
// bytes or more, both ways (see Conn.writeBulk). A pipe serializes its
// writer and its reader on one lock, so a large body is copied in, then
// out, a pipe's worth at a time; a stream socket lets the reader copy one
// buffer out while the writer fills the next, on another core. For small
// frames the pipe wakes a reader sooner, so they stay on it.
//
// Its send buffer is kept below bulkMin (the kernel doubles the figure
// asked for): a bulk body never fits in it whole, so the writer is still
// sending the body, and has not sent the trailer, when the reader takes
// the frame's header from the pipe. Unread relies on that.
func newBulkSocket() ([2]int, error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fds, fmt.Errorf("workerproc: socketpair: %w", err)
	}
	for _, fd := range fds {
		if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_SNDBUF, bulkMin/4); err != nil {
			closeFDs(fds[:])
			return fds, fmt.Errorf("workerproc: bulk socket buffer: %w", err)
		}
	}
	return fds, nil
}

// newWaker returns an eventfd, which is both the end to poll and the end
// to signal.
func newWaker() (wake, wakeW int, err error) {
	wake, err = unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		return -1, -1, fmt.Errorf("workerproc: eventfd: %w", err)
	}
	return wake, wake, nil
}

// growPipe asks for a pipe of pipeSize bytes; it is best effort.
func growPipe(wfd int) { unix.FcntlInt(uintptr(wfd), unix.F_SETPIPE_SZ, pipeSize) }

// sendFlags: no SIGPIPE for a peer that is gone, EPIPE instead.
const sendFlags = unix.MSG_NOSIGNAL

func writev(fd int, iov [][]byte) (int, error) { return unix.Writev(fd, iov) }

// recvmsg is recvmsg(2), without blocking, with the descriptors received
// made close-on-exec by the kernel; and without the allocations of
// unix.Recvmsg (it decodes a source address that a socketpair never needs).
func recvmsg(fd int, p, oob []byte) (n, oobn, rflags int, errno unix.Errno) {
	var iov unix.Iovec
	iov.Base = &p[0]
	iov.SetLen(len(p))
	var msg unix.Msghdr
	msg.Iov = &iov
	msg.SetIovlen(1)
	msg.Control = &oob[0]
	msg.SetControllen(len(oob))
	r, _, e := unix.Syscall(unix.SYS_RECVMSG, uintptr(fd), uintptr(unsafe.Pointer(&msg)), uintptr(unix.MSG_CMSG_CLOEXEC|unix.MSG_DONTWAIT))
	if e != 0 {
		return 0, 0, 0, e
	}
	return int(r), int(msg.Controllen), int(msg.Flags), 0
}
