package shmbuf

import (
	"testing"

	"github.com/vmihailenco/msgpack/v5"
	"golang.org/x/sys/unix"
)

// hop sends v from one Peer to the other, decoding into out; segments are
// adopted on first sight.
func hop(b *testing.B, from, to *peer, v, out any) {
	data, segs, err := from.Marshal(v)
	if err != nil {
		b.Fatal(err)
	}
	for _, s := range segs {
		fd, _ := unix.Dup(s.FD)
		if err := to.Adopt(s.ID, fd, s.Size); err != nil {
			b.Fatal(err)
		}
	}
	CloseGiven(segs)
	if err := to.Unmarshal(data, out); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkCrossProcessEncoding compares what crosses the wire for a
// payload sent to a worker and back: the bytes themselves (msgpack of a
// []byte, encode + decode on each hop) against a moved Buffer (a 29-byte
// reference each way; the worker's view of the memory is the parent's).
// Both sides run in this process, so this is the CPU cost of encoding
// only, without the socket.
func BenchmarkCrossProcessEncoding(b *testing.B) {
	type bytesMsg struct{ Data []byte }
	for _, s := range sizes {
		b.Run("bytes-"+s.name, func(b *testing.B) {
			msg := bytesMsg{Data: make([]byte, s.n)}
			b.SetBytes(int64(2 * s.n))
			for b.Loop() {
				var there, back bytesMsg
				data, _ := msgpack.Marshal(msg)
				_ = msgpack.Unmarshal(data, &there)
				data, _ = msgpack.Marshal(there)
				_ = msgpack.Unmarshal(data, &back)
				msg = back
			}
		})
		b.Run("buffer-"+s.name, func(b *testing.B) {
			p := newPair(b)
			buf := arenaBuffer(b, p.parentArena, s.n, 0)
			for b.Loop() {
				var there, back taskIn
				hop(b, p.parent, p.child, taskIn{In: buf}, &there)
				hop(b, p.child, p.parent, taskIn{In: there.In}, &back)
				buf = back.In
			}
			buf.Release()
		})
	}
}

// BenchmarkMoveCopyIn is the one-time price of Move on ordinary memory when
// it first leaves the process: a copy into the arena (plus the reference
// round trip and release).
func BenchmarkMoveCopyIn(b *testing.B) {
	for _, s := range sizes {
		b.Run(s.name, func(b *testing.B) {
			p := newPair(b)
			raw := make([]byte, s.n)
			b.SetBytes(int64(s.n))
			for b.Loop() {
				var there taskIn
				hop(b, p.parent, p.child, taskIn{In: Move(raw)}, &there)
				there.In.Release()
				if err := p.parent.ApplyReleases(p.child.DrainReleases()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
