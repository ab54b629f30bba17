//go:build linux || darwin || freebsd || netbsd || openbsd

package workerproc

import (
	"encoding/binary"
	"fmt"
	"io"
	"sync"

	"golang.org/x/sys/unix"
)

// Conn is one end of a supervisor–worker channel. Get one from
// [Process.Conn] (supervisor), [Attach] (worker) or [NewPair] (tests); the
// zero value is not usable.
//
// ReadFrame is meant for one reading goroutine (calls are serialized);
// WriteFrame is safe for concurrent use, each frame written whole. Close
// may be called at any time, from any goroutine, and unblocks both.
//
// Frames travel over a pair of pipes, descriptors over a unix socket
// beside them (SOCK_SEQPACKET on Linux, SOCK_STREAM elsewhere, where
// macOS has no SEQPACKET for AF_UNIX). On Linux, bodies of bulkMin bytes
// or more take a stream socket of their own (see writeBulk). Pipes wake a
// blocked reader about twice as fast as a socketpair for small frames,
// and the descriptors are read with plain system calls (poll, then read)
// on the calling goroutine's thread rather than through Go's network
// poller, which would add its own wake-up; see BenchmarkRoundTrip16B*. A
// blocked ReadFrame holds an OS thread.
type Conn struct {
	rfd, wfd int // frames in, frames out: non-blocking pipe ends
	sfd      int // descriptors, both ways: non-blocking unix socket
	bfd      int // bulk bodies, both ways: non-blocking stream socket, or -1
	wake     int // polled by every wait; readable once Close signalled it
	wakeW    int // where Close signals: wake itself (eventfd) or a pipe's write end
	max      int

	mu     sync.Mutex // guards refs and closed
	refs   int        // reads and writes in flight; descriptors close at zero after Close
	closed bool

	rmu    sync.Mutex
	rd     *frameReader
	oob    []byte
	waiter *waiter // how ReadFrame waits for a frame (await_unix.go)

	wmu  sync.Mutex
	wbuf []byte
}

// newConn wraps one end's descriptors (read pipe, write pipe, descriptor
// socket, and the bulk socket where the platform has one) and takes
// ownership of them; it makes them non-blocking and adds the wake-up
// eventfd.
func newConn(fds []int, max int) (*Conn, error) {
	wake, wakeW, err := newWaker()
	if err != nil {
		closeFDs(fds)
		return nil, err
	}
	for _, fd := range fds {
		if err := unix.SetNonblock(fd, true); err != nil {
			closeFDs(wakerFDs(fds, wake, wakeW))
			return nil, fmt.Errorf("workerproc: channel descriptor %d: %w", fd, err)
		}
	}
	c := &Conn{
		rfd: fds[0], wfd: fds[1], sfd: fds[2], bfd: -1, wake: wake, wakeW: wakeW, max: max,
		oob:  make([]byte, unix.CmsgSpace(MaxFDs*4)),
		wbuf: make([]byte, HeaderSize, HeaderSize+4096),
	}
	growPipe(c.wfd) // best effort
	c.waiter = newWaiter(c.rfd)
	c.rd = newFrameReader(max, c.recv, c.recvFDs)
	c.rd.await = c.awaitFrame
	if len(fds) > 3 {
		c.bfd = fds[3]
		c.rd.bulk = c.recvBulk
	}
	return c, nil
}

// NewPair returns the two ends of a new in-process channel, for testing
// a serve loop without a worker process. maxFrame 0 means DefaultMaxFrame.
func NewPair(maxFrame int) (*Conn, *Conn, error) {
	if maxFrame == 0 {
		maxFrame = DefaultMaxFrame
	}
	if maxFrame < 0 || maxFrame > MaxFrameLimit {
		return nil, nil, fmt.Errorf("workerproc: max frame %d outside [0, %d]", maxFrame, MaxFrameLimit)
	}
	ends, err := newChannel()
	if err != nil {
		return nil, nil, err
	}
	a, err := newConn(ends.parent, maxFrame)
	if err != nil {
		closeFDs(ends.child)
		return nil, nil, err
	}
	b, err := newConn(ends.child, maxFrame)
	if err != nil {
		a.Close()
		return nil, nil, err
	}
	return a, b, nil
}

// channel holds the descriptors of both ends: read pipe, write pipe,
// descriptor socket, and the bulk socket where the platform has one. All
// are close-on-exec; newChannel makes them.
type channel struct{ parent, child []int }

// withoutBulk is ch with its bulk socket closed and dropped, where it has
// one (see Spec.Plain).
func (ch channel) withoutBulk() channel {
	if len(ch.parent) > 3 {
		closeFDs([]int{ch.parent[3], ch.child[3]})
		ch.parent, ch.child = ch.parent[:3], ch.child[:3]
	}
	return ch
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

// recv is the frameReader's source: read what the pipe holds, waiting for
// it if need be.
func (c *Conn) recv(p []byte) (int, error) { return c.read(c.rfd, p) }

// recvBulk is the frameReader's source of bulk bodies: the bulk socket.
func (c *Conn) recvBulk(p []byte) (int, error) { return c.read(c.bfd, p) }

// read reads what fd holds into p, waiting for it if need be.
func (c *Conn) read(fd int, p []byte) (int, error) {
	for {
		n, err := unix.Read(fd, p)
		switch {
		case err == nil && n == 0:
			return 0, io.EOF
		case err == nil:
			return n, nil
		case err == unix.EINTR:
		case err == unix.EAGAIN:
			if err := c.wait(fd, unix.POLLIN); err != nil {
				return 0, err
			}
		default:
			return 0, fmt.Errorf("workerproc: read frame: %w", err)
		}
	}
}

// wait blocks until fd is ready for events or Close is called (ErrClosed).
func (c *Conn) wait(fd int, events int16) error {
	fds := [2]unix.PollFd{{Fd: int32(fd), Events: events}, {Fd: int32(c.wake), Events: unix.POLLIN}}
	for {
		_, err := unix.Poll(fds[:], -1)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return fmt.Errorf("workerproc: poll: %w", err)
		}
		if fds[1].Revents != 0 {
			return ErrClosed
		}
		return nil // ready, or hung up / in error: the next call says which
	}
}

// Unread returns how many bytes of the frames this side wrote the peer has
// not read yet. Once the peer is dead it tells whether the peer took the
// last frame: a frame is acted on only once read whole, so a frame with
// bytes unread was never acted on. ErrClosed after Close.
func (c *Conn) Unread() (int, error) {
	if err := c.acquire(); err != nil {
		return 0, err
	}
	defer c.release()
	n, err := pipeUnread(c.wfd)
	if err != nil {
		return 0, fmt.Errorf("workerproc: unread bytes: %w", err)
	}
	return n, nil
}

// Close ends every blocked or later call on this side with ErrClosed, and
// closes the descriptors once no call is in flight, at which point the
// peer reads EOF. It does not block and is idempotent; it returns nil.
func (c *Conn) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil
	}
	c.closed = true
	// Closing a descriptor does not wake a thread blocked on it (and would
	// race with its number being reused): the waker does the waking. Eight
	// bytes, as an eventfd takes them; a pipe takes anything.
	var one [8]byte
	binary.NativeEndian.PutUint64(one[:], 1)
	unix.Write(c.wakeW, one[:])
	c.waiter.interrupt()
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

// wakerFDs lists fds and the waker's descriptors, once each (an eventfd
// is both).
func wakerFDs(fds []int, wake, wakeW int) []int {
	fds = append(fds, wake)
	if wakeW != wake {
		fds = append(fds, wakeW)
	}
	return fds
}

// finish closes the descriptors; called with mu held, no call in flight.
func (c *Conn) finish() {
	fds := []int{c.rfd, c.wfd, c.sfd}
	if c.bfd >= 0 {
		fds = append(fds, c.bfd)
	}
	closeFDs(wakerFDs(fds, c.wake, c.wakeW))
	c.waiter.close()
	c.rfd, c.wfd, c.sfd, c.bfd, c.wake, c.wakeW = -1, -1, -1, -1, -1, -1
}
