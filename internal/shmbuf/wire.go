package shmbuf

import "github.com/vmihailenco/msgpack/v5"

// SegmentID names one shared-memory segment: the arena that owns it (a
// random number drawn when the arena is created, so the two sides of a
// connection can tell their segments apart) and its index in that arena
// (a segment reused for another Buffer keeps its index).
type SegmentID struct {
	Arena uint64
	Index uint32
}

// Segment is a segment a peer needs before it can read a message:
// Peer.Encode returns one for every segment a message references that the
// peer hasn't mapped. FD belongs to the arena and stays open at least while
// the Buffer in the segment is lent to the peer: send it (SCM_RIGHTS
// duplicates it) but never close it.
type Segment struct {
	ID   SegmentID
	FD   int
	Size int
}

// Ref is a Buffer's memory as it travels between processes: a span of a
// segment. Releases travel back as Refs (Peer.DrainReleases,
// Peer.ApplyReleases).
type Ref struct {
	Segment SegmentID
	Offset  uint64
	Length  uint64
}

// PeerStats describes a Peer's books.
type PeerStats struct {
	// Lent is the number of this process's Buffers the remote side holds,
	// LentBytes their total length.
	Lent      int
	LentBytes int64
	// Adopted is the number of the remote side's segments mapped here.
	Adopted int
	// Held is the number of live Buffers here over adopted segments.
	Held int
	// Releases is the number of releases waiting for DrainReleases.
	Releases int
}

// Peer is this process's end of the Buffer traffic with one other process:
// NewPeer's over shared memory, or CopyPeer's over a network. See peer and
// CopyPeer for the protocol each keeps and each method's contract. Safe for
// concurrent use.
type Peer interface {
	Encode(enc *msgpack.Encoder, v any) ([]Segment, error)
	Marshal(v any) ([]byte, []Segment, error)
	Decode(dec *msgpack.Decoder, v any) error
	Unmarshal(data []byte, v any) error
	Adopt(id SegmentID, fd int, size int) error
	ApplyReleases(refs []Ref) error
	DrainReleases() []Ref
	Stats() PeerStats
	Close() error
}
