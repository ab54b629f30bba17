package workerproc

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// Frame layout on the stream: a HeaderSize-byte header, then the body.
//
//	offset 0  uint32 big-endian  body length (at most the connection's MaxFrame)
//	offset 4  byte               kind (opaque to this package below KindReserved)
//	offset 5  byte               number of file descriptors sent with the frame
//	offset 6  byte               flags: 0, or flagBulk
//	offset 7  byte               reserved, must be zero
//	offset 8  uint64 big-endian  id (opaque: the pool's task id)
//
// A frame flagged flagBulk has its body on the connection's bulk stream
// instead (see Conn.writeBulk), and is followed on this stream by one
// byte, bulkTrailer, sent once the body is.
const (
	// HeaderSize is the size of a frame header in bytes.
	HeaderSize = 16
	// DefaultMaxFrame is the maximum body size when none is configured.
	DefaultMaxFrame = 64 << 20
	// MaxFrameLimit is the largest MaxFrame a connection accepts (1 GiB):
	// a body length must fit the header, and a bound keeps a corrupt length
	// from ever asking for more than this.
	MaxFrameLimit = 1 << 30
	// MaxFDs is the most file descriptors one frame may carry: a call
	// of a Subprocess pool sends one per Buffer it moves (the kernel
	// takes up to 253 with one message).
	MaxFDs = 128
	// KindReserved is the first frame kind reserved for this package's own
	// use (the handshake); the pool uses kinds below it.
	KindReserved byte = 0xF0
	// KindHello is the frame kind of the worker's handshake.
	KindHello byte = 0xFF
)

const (
	// flagBulk marks a frame whose body is on the bulk stream.
	flagBulk byte = 1
	// bulkMin is the smallest body sent on the bulk stream, where a
	// connection has one: below it the pipe is as fast or faster.
	bulkMin = 1 << 20
)

// bulkTrailer is what follows a bulk frame's header on the frame stream.
var bulkTrailer = [1]byte{0xB1}

// Frame is one message on a [Conn].
type Frame struct {
	// Kind says what the body is; kinds below KindReserved are the caller's.
	Kind byte
	// ID ties a reply to its request; opaque to this package.
	ID uint64
	// Body is the payload. A frame read from a Conn owns its Body.
	Body []byte
	// FDs are file descriptors sent along with the frame (at most MaxFDs).
	// On write the kernel duplicates them: the caller keeps its own and
	// still closes them. On read they are new descriptors (close-on-exec)
	// that the caller owns and must close.
	FDs []int
}

// putHeader encodes f's header into b[:HeaderSize].
func putHeader(b []byte, f *Frame) {
	binary.BigEndian.PutUint32(b[0:4], uint32(len(f.Body)))
	b[4] = f.Kind
	b[5] = byte(len(f.FDs))
	b[6], b[7] = 0, 0
	binary.BigEndian.PutUint64(b[8:16], f.ID)
}

// checkWrite reports whether f may be sent on a connection whose maximum
// body size is max.
func checkWrite(f *Frame, max int) error {
	if len(f.Body) > max {
		return fmt.Errorf("%w: body of %d bytes exceeds the maximum of %d", ErrFrameTooLarge, len(f.Body), max)
	}
	if len(f.FDs) > MaxFDs {
		return fmt.Errorf("workerproc: %d file descriptors in one frame, at most %d", len(f.FDs), MaxFDs)
	}
	return nil
}

// readBufSize is the reader's buffer: large enough that many small frames
// arrive in one receive, small enough to keep per-connection memory low.
const readBufSize = 64 << 10

// frameReader turns a byte stream into frames. It is platform independent
// so that the fuzz target drives the very code a Conn uses. Not safe for
// concurrent use; once it returns an error it returns that error forever,
// since the stream has lost its framing.
type frameReader struct {
	// recv reads into p like read(2): n > 0, or an error (io.EOF at the
	// end of the stream).
	recv func(p []byte) (int, error)
	// fds fetches the n descriptors sent with the frame being read; nil
	// means the stream cannot carry any.
	fds func(n int) ([]int, error)
	// bulk reads bulk bodies as recv reads the stream; nil means the
	// connection has no bulk stream, and a frame flagged flagBulk is
	// corrupt.
	bulk func(p []byte) (int, error)
	// await, if set, blocks until the stream has bytes to read; the
	// reader calls it before a frame's first receive when nothing is
	// buffered (see Conn.awaitFrame).
	await func() error
	// alloc makes a body; tests hook it to check no body exceeds max.
	alloc func(n int) []byte
	max   int
	buf   []byte
	r, w  int
	err   error
}

func newFrameReader(max int, recv func(p []byte) (int, error), fds func(n int) ([]int, error)) *frameReader {
	return &frameReader{
		recv:  recv,
		fds:   fds,
		alloc: func(n int) []byte { return make([]byte, n) },
		max:   max,
		buf:   make([]byte, readBufSize),
	}
}

// next returns the next frame, io.EOF at a clean end of the stream (between
// frames), or an error wrapping ErrFrameTooLarge / ErrCorruptFrame / the
// receive error.
func (r *frameReader) next() (Frame, error) {
	if r.err != nil {
		return Frame{}, r.err
	}
	f, err := r.read()
	if err != nil {
		r.err = err
	}
	return f, err
}

func (r *frameReader) read() (Frame, error) {
	if r.r == r.w && r.await != nil {
		if err := r.await(); err != nil {
			return Frame{}, err
		}
	}
	if err := r.fill(HeaderSize); err != nil {
		if errors.Is(err, io.EOF) && r.w == r.r {
			return Frame{}, io.EOF
		}
		return Frame{}, r.streamError(err, "header")
	}
	h := r.buf[r.r : r.r+HeaderSize]
	length := binary.BigEndian.Uint32(h[0:4])
	f := Frame{Kind: h[4], ID: binary.BigEndian.Uint64(h[8:16])}
	nfds, flags := int(h[5]), h[6]
	if flags&^flagBulk != 0 || h[7] != 0 {
		return Frame{}, fmt.Errorf("%w: header flags %#x and reserved byte %#x: want 0 or %#x, and 0", ErrCorruptFrame, h[6], h[7], flagBulk)
	}
	if uint64(length) > uint64(r.max) {
		return Frame{}, fmt.Errorf("%w: header announces %d bytes, the maximum is %d", ErrFrameTooLarge, length, r.max)
	}
	if nfds > MaxFDs {
		return Frame{}, fmt.Errorf("%w: header announces %d file descriptors, at most %d", ErrCorruptFrame, nfds, MaxFDs)
	}
	r.r += HeaderSize
	if flags&flagBulk != 0 && r.bulk == nil {
		return Frame{}, fmt.Errorf("%w: frame's body announced on a bulk stream this connection does not have", ErrCorruptFrame)
	}
	f.Body = r.alloc(int(length))
	if flags&flagBulk != 0 {
		if err := r.readBulk(f.Body); err != nil {
			return Frame{}, err
		}
		return r.withFDs(f, nfds)
	}
	n := copy(f.Body, r.buf[r.r:r.w])
	r.r += n
	for n < len(f.Body) {
		// The buffer is empty here. A large rest goes straight into the body.
		r.r, r.w = 0, 0
		if len(f.Body)-n >= len(r.buf) {
			m, err := r.receive(f.Body[n:])
			if err != nil {
				return Frame{}, r.streamError(err, "body")
			}
			n += m
			continue
		}
		if err := r.fill(1); err != nil {
			return Frame{}, r.streamError(err, "body")
		}
		m := copy(f.Body[n:], r.buf[r.r:r.w])
		r.r += m
		n += m
	}
	return r.withFDs(f, nfds)
}

// withFDs completes f with the nfds descriptors sent with it.
func (r *frameReader) withFDs(f Frame, nfds int) (Frame, error) {
	if nfds == 0 {
		return f, nil
	}
	if r.fds == nil {
		return Frame{}, fmt.Errorf("%w: frame announces %d file descriptors on a stream without any", ErrCorruptFrame, nfds)
	}
	fds, err := r.fds(nfds)
	if err != nil {
		return Frame{}, err
	}
	f.FDs = fds
	return f, nil
}

// readBulk reads a bulk frame's body from the bulk stream, then its
// trailer from the frame stream.
func (r *frameReader) readBulk(body []byte) error {
	for n := 0; n < len(body); {
		m, err := r.bulk(body[n:])
		if err == nil && m <= 0 {
			err = io.ErrNoProgress
		}
		if err != nil {
			return r.streamError(err, "body (bulk)")
		}
		n += m
	}
	if err := r.fill(len(bulkTrailer)); err != nil {
		return r.streamError(err, "trailer")
	}
	if t := r.buf[r.r]; t != bulkTrailer[0] {
		return fmt.Errorf("%w: bulk frame's trailer is %#x, want %#x", ErrCorruptFrame, t, bulkTrailer[0])
	}
	r.r += len(bulkTrailer)
	return nil
}

// fill makes at least k bytes available in buf[r:w], receiving more.
func (r *frameReader) fill(k int) error {
	if r.w-r.r >= k {
		return nil
	}
	if len(r.buf)-r.r < k {
		r.w = copy(r.buf, r.buf[r.r:r.w])
		r.r = 0
	}
	for r.w-r.r < k {
		m, err := r.receive(r.buf[r.w:])
		if err != nil {
			return err
		}
		r.w += m
	}
	return nil
}

func (r *frameReader) receive(p []byte) (int, error) {
	n, err := r.recv(p)
	if err == nil && n <= 0 {
		err = io.ErrNoProgress
	}
	return n, err
}

// streamError explains an error that hit inside a frame.
func (r *frameReader) streamError(err error, where string) error {
	if errors.Is(err, io.EOF) {
		return fmt.Errorf("%w: stream ended inside a frame %s: %w", ErrCorruptFrame, where, io.ErrUnexpectedEOF)
	}
	return err
}
