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
// peer hasn't mapped. A lent segment's FD belongs to the arena and stays
// open at least while the Buffer in it is lent to the peer: send it
// (SCM_RIGHTS duplicates it) but never close it. A given one's (Given,
// from a WorkerSide Peer) belongs to the caller, the only reference left
// to that memory here: close it once the message is sent or can't be
// (CloseGiven).
type Segment struct {
	ID    SegmentID
	FD    int
	Size  int
	Given bool
}

// CloseGiven closes the descriptors of the given segments among segs, for
// the caller of a WorkerSide Peer's Encode once its message is sent or
// can't be.
func CloseGiven(segs []Segment) {
	for _, s := range segs {
		if s.Given {
			closeFD(s.FD)
		}
	}
}

// Side is which end of a parent–worker connection a Peer is, which
// decides where the memory of a Buffer made on one side and sent to the
// other ends up: with the parent, always.
type Side uint8

const (
	// ParentSide lends its own segments (they come back, or their
	// releases do) and takes over the segments the worker gives it: a
	// Buffer a worker made becomes the parent's own.
	ParentSide Side = iota
	// WorkerSide borrows the parent's segments while it holds their
	// Buffers, and gives its own away as it sends them: it keeps no
	// mapping nor descriptor of a Buffer it sent, so the worker's later
	// tasks can't reach it.
	WorkerSide
)

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
	// Adopted is the number of the remote side's segments mapped here
	// (on the ParentSide: given and not yet taken over by a Decode).
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
