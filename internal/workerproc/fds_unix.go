//go:build linux || darwin || freebsd || netbsd || openbsd

package workerproc

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// A frame's descriptors travel on the unix socket beside the pipes: the
// writer sends them (SCM_RIGHTS, with one byte) before the frame that
// announces them, so the reader finds them waiting when it has read that
// frame. recvmsg, which takes one byte and its descriptors, without
// blocking, and makes them close-on-exec, is the platform's.

func (c *Conn) sendFDs(fds []int) error {
	rights := unix.UnixRights(fds...)
	for {
		err := unix.Sendmsg(c.sfd, []byte{byte(len(fds))}, rights, nil, sendFlags)
		switch err {
		case nil:
			return nil
		case unix.EINTR:
		case unix.EAGAIN:
			if err := c.wait(c.sfd, unix.POLLOUT); err != nil {
				return err
			}
		default:
			return err
		}
	}
}

// recvFDs takes the n descriptors of the frame just read from the socket,
// where the writer put them before the frame.
func (c *Conn) recvFDs(n int) ([]int, error) {
	var b [1]byte
	for {
		_, oobn, flags, errno := recvmsg(c.sfd, b[:], c.oob)
		if errno == unix.EINTR {
			continue
		}
		if errno == unix.EAGAIN {
			return nil, fmt.Errorf("%w: frame announces %d file descriptors, none arrived", ErrCorruptFrame, n)
		}
		if errno != 0 {
			return nil, fmt.Errorf("workerproc: read file descriptors: %w", errno)
		}
		fds, err := parseRights(c.oob[:oobn])
		if err != nil {
			return nil, err
		}
		if flags&unix.MSG_CTRUNC != 0 || len(fds) != n {
			closeFDs(fds)
			return nil, fmt.Errorf("%w: frame announces %d file descriptors, %d arrived", ErrCorruptFrame, n, len(fds))
		}
		return fds, nil
	}
}

func parseRights(oob []byte) ([]int, error) {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return nil, fmt.Errorf("%w: control message: %w", ErrCorruptFrame, err)
	}
	var fds []int
	for i := range msgs {
		got, err := unix.ParseUnixRights(&msgs[i])
		if err != nil {
			continue // not SCM_RIGHTS; nothing to own
		}
		fds = append(fds, got...)
	}
	return fds, nil
}

func closeFDs(fds []int) {
	for _, fd := range fds {
		unix.Close(fd)
	}
}
