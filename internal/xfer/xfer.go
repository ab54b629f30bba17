// Package xfer is package transfer's cross-process plumbing, for the
// transports that move Buffers between processes: the Peer that keeps one
// connection's books, the wire types of a moved Buffer, and the walkers
// over values that may hold Buffers.
//
// Package transfer implements all of it — the implementation needs a
// Buffer's internals — and fills in the functions below when it is
// initialised. Import transfer (as every user of Buffers does) before
// calling them; they are nil otherwise.
package xfer

import (
	"errors"
	"io"
	"reflect"

	"github.com/vmihailenco/msgpack/v5"
)

// SegmentID names one shared-memory segment: the arena that owns it (a
// random number drawn when the arena is created, so the two sides of a
// connection can tell their segments apart) and its index in that arena.
type SegmentID struct {
	Arena uint64
	Index uint32
}

// Segment is a segment a peer needs before it can read a message:
// Peer.Encode returns one for every segment a message references that the
// peer hasn't been sent yet. FD belongs to the arena and stays open for the
// life of the process: send it (SCM_RIGHTS duplicates it) but never close
// it.
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
// see package transfer's doc for the protocol it keeps, and its
// implementation for each method's contract. Safe for concurrent use.
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

// Implemented by package transfer, which sets them at init.
var (
	// NewPeer returns a Peer for a new connection, over the process arena.
	NewPeer func() Peer
	// CopyPeer is the Peer of a link without shared memory (a network):
	// Buffers cross by copy, their handles left as they are on encoding;
	// decoded ones are new Buffers. It keeps no books and is never closed.
	CopyPeer Peer
	// HandOverAt moves the Buffers in the value ptr points to to new
	// handles, rewriting it in place: the in-process hand-over. On error
	// (a detached Buffer) the value is left as it was.
	HandOverAt func(ptr any) error
	// Check reports what in v can't cross a process boundary.
	Check func(v any) error
	// CanHold reports whether a value of type t can hold a Buffer.
	CanHold func(t reflect.Type) bool
	// ReleaseAll releases every live Buffer in v.
	ReleaseAll func(v any)
	// ValidateMessage checks that data is one well-formed msgpack value
	// whose claimed lengths fit in data.
	ValidateMessage func(data []byte) error
	// NewDecoder returns a msgpack decoder for bytes another process sent.
	NewDecoder func(r io.Reader) *msgpack.Decoder
)

// Errors of the plumbing, matchable with errors.Is.
var (
	// ErrNoPeer is returned when a *Buffer is encoded with msgpack outside
	// Peer.Encode: its reference would mean nothing to the reader.
	ErrNoPeer = errors.New("transfer: a Buffer can only be encoded by a Peer")
	// ErrBadRef is returned (wrapped) when decoding meets a malformed buffer
	// reference, one outside its segment, one to an unknown segment, or one
	// that was never lent to the peer that sent it back.
	ErrBadRef = errors.New("transfer: bad buffer reference")
	// ErrBadSegment is returned (wrapped) by Peer.Adopt for a descriptor
	// that isn't a usable shared-memory segment.
	ErrBadSegment = errors.New("transfer: bad segment")
	// ErrPeerClosed is returned by a Peer's methods after Close.
	ErrPeerClosed = errors.New("transfer: peer is closed")
	// ErrBadMessage is returned (wrapped) by ValidateMessage for bytes that
	// aren't one well-formed msgpack value.
	ErrBadMessage = errors.New("transfer: malformed message")
)
