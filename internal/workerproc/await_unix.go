//go:build linux || darwin || freebsd || netbsd || openbsd

package workerproc

import (
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// How a reader waits for the next frame. A wait in poll(2) holds its
// thread, and once it passes the runtime's 20 µs sysmon tick the runtime
// takes the thread's processor away; getting one back when the frame
// comes costs a handoff. Short waits (a trivial task's reply) are still
// cheapest in poll, the netpoller's wake-up costing more than the handoff;
// long ones (a millisecond task's) are cheaper parked in the netpoller,
// where the processor goes to other goroutines at once. A Conn learns which
// kind of waits it has from the ones it has had.

// parkAfter is the recent wait above which a reader parks in the
// netpoller rather than blocking in poll.
const parkAfter = 100 * time.Microsecond

// waiter is a Conn's frame waits: their recent length, and the netpoller's
// handle on the read end (a duplicate of it), or nil where it has none.
// The reading goroutine alone uses it (Conn.rmu), but for Close's
// interrupt and finish.
type waiter struct {
	recent time.Duration // exponentially weighted, 1/4 the newest wait
	file   *os.File      // the read end's duplicate, in the netpoller
	raw    syscall.RawConn
}

// newWaiter registers a duplicate of rfd, which is non-blocking, with the
// netpoller. It is best effort: without it every wait is a poll.
func newWaiter(rfd int) *waiter {
	w := &waiter{}
	fd, err := unix.FcntlInt(uintptr(rfd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return w
	}
	f := os.NewFile(uintptr(fd), "offload-worker-channel") // non-blocking: the netpoller takes it
	raw, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return w
	}
	w.file, w.raw = f, raw
	return w
}

// awaitFrame waits for the next frame to begin arriving. The channel is
// request and reply: each side reads when it has just written, and the
// peer's answer is almost never there yet. Reading first would cost a
// read that finds nothing, then the poll, then the read: polling first
// saves that system call on every frame a side waits for, and costs one
// (a poll that returns at once) when the frame was already there.
func (c *Conn) awaitFrame() error {
	w := c.waiter
	start := time.Now()
	var err error
	if w.raw != nil && w.recent > parkAfter {
		err = w.park()
	} else {
		err = c.wait(c.rfd, unix.POLLIN)
	}
	w.recent += (time.Since(start) - w.recent) / 4
	return err
}

// park waits in the netpoller until the read end is readable (or hung
// up). The netpoller remembers a readiness it saw while nobody waited, so
// each wake is checked with a poll that does not block.
func (w *waiter) park() error {
	return w.raw.Read(func(fd uintptr) bool { return readable(int(fd)) })
}

// readable reports whether a read of fd would not block, or fails: the
// read itself then says why.
func readable(fd int) bool {
	fds := [1]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	n, err := unix.Poll(fds[:], 0)
	return err != nil || n > 0
}

// interrupt ends a wait in park at once; Close calls it.
func (w *waiter) interrupt() {
	if w.file != nil {
		w.file.SetReadDeadline(time.Unix(1, 0))
	}
}

// close lets go of the duplicate; no wait may be under way.
func (w *waiter) close() {
	if w.file != nil {
		w.file.Close()
	}
}
