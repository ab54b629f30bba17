//go:build linux || darwin || freebsd || netbsd || openbsd

package workerproc

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// The write side of a Conn: whole frames, batched where they are small,
// their bodies on the bulk socket where they are large.

// smallWrite is the largest frame copied into one buffer for a single
// write; larger bodies go out with writev, uncopied.
const smallWrite = 64 << 10

// WriteFrame sends f whole. It blocks while the pipe is full. A body above
// MaxFrame or more than MaxFDs descriptors is refused with nothing sent. A
// peer that is gone gives an error wrapping EPIPE; after Close, ErrClosed.
func (c *Conn) WriteFrame(f Frame) error {
	if err := checkWrite(&f, c.max); err != nil {
		return err
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if err := c.acquire(); err != nil {
		return err
	}
	err := c.write(&f)
	if c.release() && err != nil {
		return ErrClosed
	}
	if err != nil {
		return fmt.Errorf("workerproc: write frame: %w", err)
	}
	return nil
}

// WriteFrames sends the frames in order as WriteFrame would, in as few
// system calls as their size allows: batching many small frames lifts the
// rate a single writer can reach (one write per frame caps it). Every
// frame is checked first; if one is refused, nothing is sent. Frames that
// precede a failed write may have been sent.
func (c *Conn) WriteFrames(fs ...Frame) error {
	for i := range fs {
		if err := checkWrite(&fs[i], c.max); err != nil {
			return err
		}
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if err := c.acquire(); err != nil {
		return err
	}
	err := c.writeBatch(fs)
	if c.release() && err != nil {
		return ErrClosed
	}
	if err != nil {
		return fmt.Errorf("workerproc: write frames: %w", err)
	}
	return nil
}

// writeBatch gathers small frames into one buffer, flushing it before a
// large frame, a frame with descriptors, or when it is full.
func (c *Conn) writeBatch(fs []Frame) error {
	c.wbuf = c.wbuf[:0]
	flush := func() error {
		if len(c.wbuf) == 0 {
			return nil
		}
		err := c.writeAll(c.wfd, c.wbuf, nil)
		c.wbuf = c.wbuf[:0]
		return err
	}
	for i := range fs {
		f := &fs[i]
		if len(f.FDs) > 0 || len(f.Body) > smallWrite {
			if err := flush(); err != nil {
				return err
			}
			if err := c.write(f); err != nil {
				return err
			}
			c.wbuf = c.wbuf[:0]
			continue
		}
		if len(c.wbuf)+HeaderSize+len(f.Body) > smallWrite {
			if err := flush(); err != nil {
				return err
			}
		}
		n := len(c.wbuf)
		c.wbuf = append(c.wbuf, make([]byte, HeaderSize)...)
		putHeader(c.wbuf[n:], f)
		c.wbuf = append(c.wbuf, f.Body...)
	}
	return flush()
}

func (c *Conn) write(f *Frame) error {
	if len(f.FDs) > 0 {
		// The descriptors go first: once the reader has the frame's header
		// they are waiting on the socket.
		if err := c.sendFDs(f.FDs); err != nil {
			return err
		}
	}
	c.wbuf = c.wbuf[:HeaderSize]
	putHeader(c.wbuf, f)
	switch {
	case len(f.Body) <= smallWrite:
		c.wbuf = append(c.wbuf, f.Body...)
		return c.writeAll(c.wfd, c.wbuf, nil)
	case len(f.Body) >= bulkMin && c.bfd >= 0:
		return c.writeBulk(f.Body)
	}
	return c.writeAll(c.wfd, c.wbuf, f.Body)
}

// writeBulk sends the frame whose header is in c.wbuf with its body on
// the bulk socket: the header, marked so, down the pipe, then the body on
// the socket, then a trailer byte down the pipe. Until the reader has the
// whole body, the trailer is still in the pipe (or not yet written), so
// Unread keeps its promise for bulk frames too (see newBulkSocket).
func (c *Conn) writeBulk(body []byte) error {
	c.wbuf[6] = flagBulk
	if err := c.writeAll(c.wfd, c.wbuf, nil); err != nil {
		return err
	}
	if err := c.writeAll(c.bfd, body, nil); err != nil {
		return err
	}
	return c.writeAll(c.wfd, bulkTrailer[:], nil)
}

// writeAll writes a then b to fd, with writev, waiting while it is full.
func (c *Conn) writeAll(fd int, a, b []byte) error {
	iov := [][]byte{a, b}
	for len(iov[0])+len(iov[1]) > 0 {
		n, err := writev(fd, iov[:])
		switch err {
		case nil:
		case unix.EINTR:
			continue
		case unix.EAGAIN:
			if err := c.wait(fd, unix.POLLOUT); err != nil {
				return err
			}
			continue
		default:
			return err
		}
		for i := range iov {
			k := min(n, len(iov[i]))
			iov[i], n = iov[i][k:], n-k
		}
	}
	return nil
}
