package transfer

import (
	"fmt"
	"sync/atomic"

	"github.com/offloadgo/offload/internal/xfer"
)

// Buffer is a handle on a region of memory that moves instead of being
// copied: handing it to a task (as input or output, directly or nested in
// a struct, slice, map, array, pointer or interface) gives the receiver a
// new handle on the same memory and detaches this one, so that exactly one
// handle owns the memory at any time.
//
// A detached handle has Bytes nil, Len 0 and Detached true; handing it over
// again fails with ErrDetached. Slices obtained from Bytes before a handle
// was handed over or released must not be used afterwards: the memory now
// belongs to someone else (Go can't revoke a slice, so this is on the
// caller).
//
// Memory comes from the process's shared arena (NewBuffer) or from the
// caller (Move). It stays valid while the handle that owns it is live, and
// is freed by Release. A Buffer that is dropped without Release keeps its
// arena space until the process exits: there is deliberately no finalizer,
// because a slice from Bytes may outlive the handle and the GC can't see
// that it points into the arena.
//
// The zero Buffer is detached; use NewBuffer or Move. A Buffer is safe for
// concurrent use in the sense that hand-over, Release and the accessors are
// atomic with respect to each other; the bytes themselves are the caller's
// to synchronise.
type Buffer struct {
	blk atomic.Pointer[block]

	// pending is the reference read by the msgpack decoder, waiting for
	// Peer.Decode to resolve it into memory.
	pending *xfer.Ref
	// inline is the bytes of a copied Buffer read by the msgpack decoder,
	// waiting for a copying Peer's Decode to make them the Buffer's own.
	inline []byte
	// wire marks the handles a Peer's Encode creates for sending, and how
	// they cross: only these may be encoded, so a Buffer can't leak out as
	// a dangling reference through a plain msgpack.Marshal.
	wire wireMode
}

// wireMode is how a handle made for sending is encoded.
type wireMode uint8

const (
	notWire    wireMode = iota
	wireRef             // as a reference into shared memory (peer)
	wireInline          // as its bytes (copyPeer)
)

// NewBuffer returns a Buffer of n zeroed bytes. On Linux the memory is in
// the process's shared arena (memfd segments mapped once, grown on demand,
// created on first use), so the Buffer can later move to a worker process
// without a copy; elsewhere it is heap memory. NewBuffer fails with
// ErrInvalidSize for n < 0 or n > 1 TiB, or when the arena can't grow (the error says
// why). Safe for concurrent use.
func NewBuffer(n int) (*Buffer, error) {
	if n < 0 || n > maxSegmentSize {
		return nil, fmt.Errorf("%w: %d bytes", ErrInvalidSize, n)
	}
	if n == 0 {
		return newHandle(&block{data: []byte{}}), nil
	}
	blk, err := processArena().alloc(n)
	if err != nil {
		return nil, err
	}
	return newHandle(blk), nil
}

// Move wraps b in a Buffer without copying: the caller gives b up and must
// not touch it afterwards. Within the process the Buffer moves as b itself.
// The first time it is sent to another process (Peer.Encode) its bytes are
// copied once into the shared arena, which is still cheaper than encoding
// them into the message; NewBuffer avoids even that copy. Move never fails,
// which is also why it doesn't copy up front: allocating arena space could.
// Move(nil) is an empty Buffer.
func Move(b []byte) *Buffer {
	if b == nil {
		b = []byte{}
	}
	return newHandle(&block{data: b})
}

// newHandle returns a live handle owning blk.
func newHandle(blk *block) *Buffer {
	b := &Buffer{}
	b.blk.Store(blk)
	return b
}

// Bytes returns the Buffer's memory, or nil once it is detached. The slice
// is valid until the Buffer is handed over or released.
func (b *Buffer) Bytes() []byte {
	if blk := b.blk.Load(); blk != nil {
		return blk.data
	}
	return nil
}

// Len returns the Buffer's length in bytes, 0 once it is detached.
func (b *Buffer) Len() int {
	if blk := b.blk.Load(); blk != nil {
		return len(blk.data)
	}
	return 0
}

// Detached reports whether the handle no longer owns memory: it was handed
// over, or released.
func (b *Buffer) Detached() bool { return b.blk.Load() == nil }

// Release frees the Buffer's memory (arena space returns to the arena; the
// memory of a Buffer received from another process is given back to its
// owner with the next message) and detaches the handle. Releasing a
// detached handle, or releasing twice, does nothing. Safe for concurrent
// use.
func (b *Buffer) Release() {
	if blk := b.blk.Swap(nil); blk != nil {
		blk.free()
	}
}

// take detaches the handle and returns the block it owned, or ErrDetached.
func (b *Buffer) take() (*block, error) {
	if blk := b.blk.Swap(nil); blk != nil {
		return blk, nil
	}
	return nil, ErrDetached
}

// block is one Buffer's memory and where it lives: a span of a local arena
// segment (arena set), a span of a segment adopted from a peer (remote
// set), or ordinary heap memory (neither). A block belongs to one owner at a
// time: a handle, or a Peer's table of blocks lent to the remote side.
type block struct {
	data []byte

	arena     *arena
	seg       *segment
	off, size int

	remote *mapping
	ref    xfer.Ref // for remote blocks: the reference as the owner knows it
}

// free returns the block's memory to where it came from.
func (blk *block) free() {
	switch {
	case blk.arena != nil:
		blk.arena.release(blk)
	case blk.remote != nil:
		blk.remote.peer.releaseRemote(blk)
	}
}

// localRef is the reference that names an arena block to a peer.
func (blk *block) localRef() xfer.Ref {
	return xfer.Ref{Segment: blk.seg.id, Offset: uint64(blk.off), Length: uint64(len(blk.data))}
}
