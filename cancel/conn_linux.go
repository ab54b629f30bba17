package cancel

import (
	"fmt"
	"io"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Conn is one end of a supervisor–worker channel: frames over a unix
// stream socket. Get one from [Process.Conn] (supervisor) or [Attach]
// (worker); the zero value is not usable.
//
// ReadFrame is meant for one reading goroutine (calls are serialized);
// WriteFrame is safe for concurrent use, each frame written whole. Close
// may be called at any time, from any goroutine, and unblocks both.
//
// The socket is used with blocking system calls, not Go's network poller:
// a blocked ReadFrame holds an OS thread, and in exchange a small round
// trip skips the poller's wake-up path (see BenchmarkRoundTrip16B and
// BenchmarkRoundTrip16BPoller for the comparison).
type Conn struct {
	fd  int
	max int

	mu     sync.Mutex // guards refs and closed
	refs   int        // reads and writes in flight; the fd is closed at zero after Close
	closed bool

	rmu sync.Mutex
	rd  *frameReader
	oob []byte

	wmu  sync.Mutex
	wbuf []byte
	hdr  [HeaderSize]byte // a field, not a local: a local escapes through writev
}

// smallWrite is the largest frame copied into one buffer for a single
// write; larger bodies go out with writev, uncopied.
const smallWrite = 64 << 10

// newConn wraps a connected, blocking unix stream socket; it takes
// ownership of fd.
func newConn(fd, max int) *Conn {
	c := &Conn{fd: fd, max: max, oob: make([]byte, unix.CmsgSpace(MaxFDs*4))}
	c.rd = newFrameReader(max, c.recv)
	return c
}

// MaxFrame is the largest frame body this connection reads or writes.
func (c *Conn) MaxFrame() int { return c.max }

// ReadFrame blocks until the next frame arrives and returns it. It returns
// io.EOF when the peer has closed its end (or died) between frames — a
// worker must then exit —, ErrClosed after Close, an error wrapping
// ErrFrameTooLarge or ErrCorruptFrame for a bad stream, after which every
// call returns the same error.
func (c *Conn) ReadFrame() (Frame, error) {
	c.rmu.Lock()
	defer c.rmu.Unlock()
	if err := c.acquire(); err != nil {
		return Frame{}, err
	}
	f, err := c.rd.next()
	if closed := c.release(); err != nil && closed {
		return Frame{}, ErrClosed
	}
	return f, err
}

// WriteFrame sends f whole, with one system call where the kernel allows.
// It blocks while the socket buffer is full. A body above MaxFrame or more
// than MaxFDs descriptors is refused with nothing sent. A peer that is gone
// gives an error wrapping EPIPE or ECONNRESET; after Close, ErrClosed.
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
		return fmt.Errorf("cancel: write frame: %w", err)
	}
	return nil
}

func (c *Conn) write(f *Frame) error {
	hdr := c.hdr[:]
	putHeader(hdr, f)
	if len(f.FDs) == 0 && len(f.Body) <= smallWrite {
		c.wbuf = append(append(c.wbuf[:0], hdr...), f.Body...)
		return c.sendAll(c.wbuf)
	}
	var oob []byte
	if len(f.FDs) > 0 {
		oob = unix.UnixRights(f.FDs...)
	}
	var n int
	var err error
	for {
		n, err = unix.SendmsgBuffers(c.fd, [][]byte{hdr, f.Body}, oob, nil, unix.MSG_NOSIGNAL)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		return err
	}
	// A signal can cut a large send short; the descriptors went with the
	// first byte, the rest follows as plain bytes.
	if n < HeaderSize {
		if err := c.sendAll(hdr[n:]); err != nil {
			return err
		}
		n = HeaderSize
	}
	return c.sendAll(f.Body[n-HeaderSize:])
}

func (c *Conn) sendAll(p []byte) error {
	for len(p) > 0 {
		n, err := unix.SendmsgN(c.fd, p, nil, nil, unix.MSG_NOSIGNAL)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		p = p[n:]
	}
	return nil
}

// recv is the frameReader's source: one recvmsg, collecting descriptors.
func (c *Conn) recv(p []byte) (int, []int, error) {
	for {
		n, oobn, flags, errno := recvmsg(c.fd, p, c.oob, unix.MSG_CMSG_CLOEXEC)
		if errno == unix.EINTR {
			continue
		}
		if errno != 0 {
			return 0, nil, fmt.Errorf("cancel: read frame: %w", errno)
		}
		var fds []int
		if oobn > 0 {
			var err error
			if fds, err = parseRights(c.oob[:oobn]); err != nil {
				return 0, nil, err
			}
		}
		if flags&unix.MSG_CTRUNC != 0 {
			closeFDs(fds)
			return 0, nil, fmt.Errorf("%w: more file descriptors arrived than a frame may carry", ErrCorruptFrame)
		}
		if n == 0 {
			return 0, fds, io.EOF
		}
		return n, fds, nil
	}
}

// recvmsg is recvmsg(2) without the allocations of unix.Recvmsg (it
// decodes a source address that a socketpair never needs).
func recvmsg(fd int, p, oob []byte, flags int) (n, oobn, rflags int, errno unix.Errno) {
	var iov unix.Iovec
	iov.Base = &p[0]
	iov.SetLen(len(p))
	var msg unix.Msghdr
	msg.Iov = &iov
	msg.SetIovlen(1)
	msg.Control = &oob[0]
	msg.SetControllen(len(oob))
	r, _, e := unix.Syscall(unix.SYS_RECVMSG, uintptr(fd), uintptr(unsafe.Pointer(&msg)), uintptr(flags))
	if e != 0 {
		return 0, 0, 0, e
	}
	return int(r), int(msg.Controllen), int(msg.Flags), 0
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

// Close shuts the socket down — a blocked ReadFrame returns ErrClosed, the
// peer reads EOF — and releases the descriptor once no call is in flight,
// with any descriptors received but not yet claimed by a frame. It does
// not block and is idempotent; it returns nil.
func (c *Conn) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil
	}
	c.closed = true
	// shutdown, unlike close, wakes a thread blocked in recvmsg or sendmsg
	// and cannot race with the descriptor number being reused.
	unix.Shutdown(c.fd, unix.SHUT_RDWR)
	if c.refs == 0 {
		c.finish()
	}
	return nil
}

func (c *Conn) acquire() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return ErrClosed
	}
	c.refs++
	return nil
}

// release ends a call; it reports whether the conn was closed meanwhile.
func (c *Conn) release() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.refs--
	if c.closed && c.refs == 0 {
		c.finish()
	}
	return c.closed
}

// finish closes the descriptor; called with mu held, no call in flight.
func (c *Conn) finish() {
	unix.Close(c.fd)
	c.fd = -1
	closeFDs(c.rd.takeFDs())
}
