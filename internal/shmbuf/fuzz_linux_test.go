package shmbuf

import (
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// FuzzPeerDecode feeds arbitrary messages to a Peer that has adopted one
// real segment and holds nothing: decoding must fail cleanly or yield
// Buffers inside the segment, and never panic, leak a held reference or
// recurse past a small stack (limitStack);
// and to the copying Peer, whose Buffers must fit in the message.
func FuzzPeerDecode(f *testing.F) {
	p := newPair(f)
	b := arenaBuffer(f, p.parentArena, 100, 0)
	valid, segs, err := p.parent.Marshal(taskIn{In: b, Name: "x"})
	require.NoError(f, err)
	for _, s := range segs {
		fd, err := unix.Dup(s.FD)
		require.NoError(f, err)
		require.NoError(f, p.child.Adopt(s.ID, fd, s.Size))
	}
	seg := p.parentArena.segs[0]
	other := appendRef(nil, Ref{Segment: seg.id, Offset: 128, Length: 64})
	f.Add(valid)
	f.Add(rawRef(f, other))
	f.Add(rawRef(f, appendRef(nil, Ref{Segment: seg.id, Offset: 1 << 62, Length: 1 << 62})))
	f.Add(rawRef(f, []byte{1, 2}))
	f.Add([]byte{0xc7, 0xff, byte(extID)})
	f.Add([]byte{0x91, 0xd7, byte(extID), 0, 0, 0, 0, 0, 0, 0, 0})
	f.Add([]byte{})
	copied, _, err := CopyPeer{}.Marshal([]*Buffer{Move([]byte("abc")), Move(nil)})
	require.NoError(f, err)
	f.Add(copied)
	// Nested deeper than a decode may go: refused whole, in a small stack.
	f.Add(deepArrays(MaxDepth + 1))
	f.Add(deepArrays(50_000))
	f.Add(cat([]byte{0x82, 0xa2, 'I', 'n'}, deepArrays(MaxDepth)))
	limitStack(f)
	segLen := len(seg.mem)
	f.Fuzz(func(t *testing.T, data []byte) {
		check := func(bufs ...*Buffer) {
			for _, b := range bufs {
				if b == nil || b.Detached() {
					continue
				}
				blk := b.blk.Load()
				if blk.remote != nil && (blk.ref.Offset+blk.ref.Length > uint64(segLen)) {
					t.Fatalf("Buffer outside its segment: %+v", blk.ref)
				}
				_ = b.Bytes()[:b.Len()]
				b.Release()
			}
		}
		var in taskIn
		if p.child.Unmarshal(data, &in) == nil {
			check(in.In)
		}
		var list []*Buffer
		if p.child.Unmarshal(data, &list) == nil {
			check(list...)
		}
		var anything any
		if p.child.Unmarshal(data, &anything) == nil {
			ReleaseAll(anything)
		}
		// The copying Peer of natsremote reads the same extension.
		var copies []*Buffer
		if (CopyPeer{}).Unmarshal(data, &copies) == nil {
			for _, b := range copies {
				if b != nil && b.Len() > len(data) {
					t.Fatalf("a copied Buffer of %d bytes from a %d-byte message", b.Len(), len(data))
				}
			}
		}
		if held := p.child.Stats().Held; held != 0 {
			t.Fatalf("%d references still held after releasing everything", held)
		}
	})
}
