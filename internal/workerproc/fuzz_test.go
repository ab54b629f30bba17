package workerproc

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"testing"
)

// FuzzReadFrame: arbitrary bytes never panic, never make the reader
// allocate a body above the maximum, and every frame read back is within
// the limits. The stream is delivered in pieces whose sizes come from the
// input too, so frames split across receives are covered, and so does the
// size of the reader's buffer, so that bodies both smaller and larger than
// it (read straight into the body) are.
//
// Everything is kept small for the fuzzer's sake: a short input reaches
// every length a header can announce, one exec costs microseconds, and
// minimising a new input, which takes time quadratic in its length (up to
// 60 s each by default, during which that worker fuzzes nothing), stays
// quick. With the earlier 4096-byte maximum, 64 KiB buffer and a 4 KiB
// seed, the fuzzer spent most of its time minimising.
func FuzzReadFrame(f *testing.F) {
	const (
		max = 256
		// Only a prefix of the input is read, so a longer input acts as its
		// prefix and never looks new to the fuzzer; it holds a few frames.
		maxInput = 4 * (HeaderSize + max)
	)
	frame := func(length uint32, kind, nfds byte, id uint64, body []byte) []byte {
		h := make([]byte, HeaderSize)
		binary.BigEndian.PutUint32(h, length)
		h[4], h[5] = kind, nfds
		binary.BigEndian.PutUint64(h[8:], id)
		return append(h, body...)
	}
	// piece: the most bytes one receive returns (0: no limit); buf: the
	// reader's buffer size beyond HeaderSize, in units of 2 bytes (so from
	// a header's size to well above max).
	f.Add(uint8(0), uint8(0), []byte{}, []byte(nil))
	f.Add(uint8(1), uint8(0), frame(5, 1, 0, 7, []byte("hello")), []byte(nil))
	f.Add(uint8(3), uint8(255), append(frame(0, 2, 0, 1, nil), frame(3, 3, 0, 2, []byte("abc"))...), []byte(nil))
	f.Add(uint8(0), uint8(8), frame(max, 1, 0, 1, make([]byte, max)), []byte(nil))
	f.Add(uint8(7), uint8(0), frame(40, 1, 0, 1, make([]byte, 40)), []byte(nil)) // a body larger than the buffer
	f.Add(uint8(2), uint8(0), frame(max+1, 1, 0, 1, nil), []byte(nil))
	f.Add(uint8(0), uint8(0), frame(^uint32(0), 1, 0, 1, nil), []byte(nil))
	f.Add(uint8(5), uint8(0), frame(40, 1, 0, 1, []byte("short")), []byte(nil)) // ends inside a body larger than the buffer
	f.Add(uint8(0), uint8(0), frame(1, 1, 2, 1, []byte("x")), []byte(nil))
	f.Add(uint8(0), uint8(0), []byte{0, 0, 0, 1, 0, 0, 1, 0}, []byte(nil))
	bulkFrame := frame(5, 1, 0, 8, nil)
	bulkFrame[6] = flagBulk
	f.Add(uint8(0), uint8(0), append(bulkFrame, bulkTrailer[:]...), []byte("hello"))
	f.Add(uint8(2), uint8(0), append(bulkFrame, 0), []byte("hello")) // a wrong trailer
	f.Fuzz(func(t *testing.T, piece, buf uint8, data, bulk []byte) {
		data, bulk = data[:min(len(data), maxInput)], bulk[:min(len(bulk), maxInput)]
		src := bytes.NewReader(data)
		recv := func(p []byte) (int, error) {
			if n := int(piece); n > 0 && n < len(p) {
				p = p[:n]
			}
			return src.Read(p)
		}
		r := newFrameReader(max, recv, nil)
		r.bulk = bytes.NewReader(bulk).Read // the bulk stream's bodies
		r.buf = make([]byte, HeaderSize+2*int(buf))
		r.alloc = func(n int) []byte {
			if n > max {
				t.Fatalf("allocating a %d-byte body, the maximum is %d", n, max)
			}
			return make([]byte, n)
		}
		for range len(data) + 1 { // each frame consumes at least a header
			fr, err := r.next()
			if err != nil {
				if !errors.Is(err, io.EOF) && !errors.Is(err, ErrFrameTooLarge) && !errors.Is(err, ErrCorruptFrame) {
					t.Fatalf("unexpected error %v", err)
				}
				return
			}
			if len(fr.Body) > max || len(fr.FDs) != 0 {
				t.Fatalf("frame out of limits: %d bytes, %d fds", len(fr.Body), len(fr.FDs))
			}
		}
		t.Fatal("reader did not stop at the end of its input")
	})
}
