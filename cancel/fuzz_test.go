package cancel

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
// input too, so frames split across receives are covered.
func FuzzReadFrame(f *testing.F) {
	const max = 4096
	frame := func(length uint32, kind, nfds byte, id uint64, body []byte) []byte {
		h := make([]byte, HeaderSize)
		binary.BigEndian.PutUint32(h, length)
		h[4], h[5] = kind, nfds
		binary.BigEndian.PutUint64(h[8:], id)
		return append(h, body...)
	}
	f.Add(uint8(0), []byte{})
	f.Add(uint8(1), frame(5, 1, 0, 7, []byte("hello")))
	f.Add(uint8(3), append(frame(0, 2, 0, 1, nil), frame(3, 3, 0, 2, []byte("abc"))...))
	f.Add(uint8(0), frame(max, 1, 0, 1, make([]byte, max)))
	f.Add(uint8(2), frame(max+1, 1, 0, 1, nil))
	f.Add(uint8(0), frame(^uint32(0), 1, 0, 1, nil))
	f.Add(uint8(5), frame(10, 1, 0, 1, []byte("short")))
	f.Add(uint8(0), frame(1, 1, 2, 1, []byte("x")))
	f.Add(uint8(0), []byte{0, 0, 0, 1, 0, 0, 1, 0})
	f.Fuzz(func(t *testing.T, piece uint8, data []byte) {
		src := bytes.NewReader(data)
		recv := func(p []byte) (int, error) {
			if n := int(piece); n > 0 && n < len(p) {
				p = p[:n]
			}
			return src.Read(p)
		}
		r := newFrameReader(max, recv, nil)
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
