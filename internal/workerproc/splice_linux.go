package workerproc

import "golang.org/x/sys/unix"

// A large body is handed to the pipe by reference (vmsplice) rather than
// copied into it: the kernel copies it once, into the reader's buffer,
// instead of twice, and allocates no pipe pages for it. For a 44 MiB
// input that copy, and the pages, were a quarter of the pool's side of
// the call.
//
// A spliced page stays the writer's memory until the reader has copied
// it out, and WriteFrame's callers reuse or drop a body as soon as it
// returns. So the last pipeCapacity bytes are written as copies: they
// need every slot of the pipe, which frees a slot only once the reader
// has copied it out (in order), so when the copy is written whole, no
// spliced page is left in the pipe.

// pipeCapacity returns the capacity in bytes of the pipe whose write end
// is fd, or 0 if it can't be read (then nothing is spliced).
func pipeCapacity(fd int) int {
	n, err := unix.FcntlInt(uintptr(fd), unix.F_GETPIPE_SZ, 0)
	if err != nil || n <= 0 {
		return 0
	}
	return n
}

// writeSpliced writes head, then body, splicing all of body but its last
// c.pipeCap bytes, which it writes as copies; it returns once the reader
// holds every spliced page (see above).
func (c *Conn) writeSpliced(head, body []byte) error {
	split := len(body) - c.pipeCap
	if err := c.writeAll(head, nil); err != nil {
		return err
	}
	for rest := body[:split]; len(rest) > 0; {
		iov := []unix.Iovec{{Base: &rest[0]}}
		iov[0].SetLen(len(rest))
		n, err := unix.Vmsplice(c.wfd, iov, 0)
		switch err {
		case nil:
			rest = rest[n:]
		case unix.EINTR:
		case unix.EAGAIN:
			if err := c.wait(c.wfd, unix.POLLOUT); err != nil {
				return err
			}
		default:
			return err
		}
	}
	return c.writeAll(body[split:], nil)
}
