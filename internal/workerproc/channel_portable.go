//go:build darwin || freebsd || netbsd || openbsd || (linux && offload_portable)

package workerproc

import (
	"errors"
	"fmt"
	"syscall"

	"golang.org/x/sys/unix"
)

// The portable channel, for macOS and the BSDs (and for Linux built with
// the offload_portable tag, so that Linux CI runs this code): the same
// pipes for frames, and beside them a SOCK_STREAM socket for descriptors,
// since macOS has no SOCK_SEQPACKET for AF_UNIX. A stream is enough: each
// frame's descriptors travel as one byte sent with its SCM_RIGHTS, and the
// reader takes exactly one byte per receive, so it gets exactly that
// byte's descriptors. macOS has no pipe2, SOCK_CLOEXEC or eventfd: the
// descriptors are made under syscall.ForkLock and marked close-on-exec
// before any fork can copy them, and a pipe wakes waiters.

func newChannel() (channel, error) {
	var ch channel
	down, err := cloexecPipe() // parent to child
	if err != nil {
		return ch, err
	}
	up, err := cloexecPipe() // child to parent
	if err != nil {
		closeFDs(down[:])
		return ch, err
	}
	sock, err := cloexecSocketpair()
	if err != nil {
		closeFDs(append(down[:], up[:]...))
		return ch, err
	}
	ch.parent = []int{up[0], down[1], sock[0]}
	ch.child = []int{down[0], up[1], sock[1]}
	return ch, nil
}

// The channel's descriptors in the worker, in exec.Cmd.ExtraFiles order,
// and the kind each must be: the pipe it reads frames from, the pipe it
// writes frames to, the socket for file descriptors. There is no bulk
// socket here: every body goes down the pipe.
var (
	workerFDs     = []int{3, 4, 5}
	workerFDKinds = []uint32{unix.S_IFIFO, unix.S_IFIFO, unix.S_IFSOCK}
)

// cloexecPipe makes a pipe whose ends are close-on-exec before any
// process can be forked with them.
func cloexecPipe() ([2]int, error) {
	var p [2]int
	syscall.ForkLock.RLock()
	defer syscall.ForkLock.RUnlock()
	if err := unix.Pipe(p[:]); err != nil {
		return p, fmt.Errorf("workerproc: pipe: %w", err)
	}
	unix.CloseOnExec(p[0])
	unix.CloseOnExec(p[1])
	return p, nil
}

func cloexecSocketpair() ([2]int, error) {
	syscall.ForkLock.RLock()
	defer syscall.ForkLock.RUnlock()
	sock, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	if err != nil {
		return sock, fmt.Errorf("workerproc: socketpair: %w", err)
	}
	unix.CloseOnExec(sock[0])
	unix.CloseOnExec(sock[1])
	return sock, nil
}

// newWaker returns a non-blocking pipe: waiters poll its read end, Close
// writes to the other.
func newWaker() (wake, wakeW int, err error) {
	p, err := cloexecPipe()
	if err != nil {
		return -1, -1, err
	}
	for _, fd := range p {
		if err := unix.SetNonblock(fd, true); err != nil {
			closeFDs(p[:])
			return -1, -1, fmt.Errorf("workerproc: waker pipe: %w", err)
		}
	}
	return p[0], p[1], nil
}

// growPipe does nothing: only Linux can resize a pipe.
func growPipe(int) {}

// sendFlags is none: MSG_NOSIGNAL is not everywhere (macOS lacks it), and
// Go's runtime already turns SIGPIPE on a descriptor other than stdout and
// stderr into an EPIPE error.
const sendFlags = 0

// recvmsg is recvmsg(2) without blocking. MSG_CMSG_CLOEXEC is not
// everywhere (macOS lacks it): the descriptors received are made
// close-on-exec under syscall.ForkLock, before any fork can copy them.
func recvmsg(fd int, p, oob []byte) (n, oobn, rflags int, errno unix.Errno) {
	syscall.ForkLock.RLock()
	defer syscall.ForkLock.RUnlock()
	n, oobn, rflags, _, err := unix.Recvmsg(fd, p, oob, unix.MSG_DONTWAIT)
	if err != nil {
		if !errors.As(err, &errno) {
			errno = unix.EIO
		}
		return 0, 0, 0, errno
	}
	if fds, err := parseRights(oob[:oobn]); err == nil {
		for _, fd := range fds {
			unix.CloseOnExec(fd)
		}
	}
	return n, oobn, rflags, 0
}
