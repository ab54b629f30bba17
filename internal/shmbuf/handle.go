package shmbuf

import (
	"fmt"
	"reflect"
	"sync/atomic"
)

// Handle is the state behind one Buffer handle: the block of memory it
// owns (none once detached), and what the msgpack extension wrote or read
// for it on the way between processes. The zero Handle is detached.
// Taking, releasing and the accessors are atomic with respect to each
// other; the bytes are the owner's to synchronise.
//
// A Buffer type is a struct whose only field is a Handle: transfer.Buffer
// (and, in this package's tests, a Buffer of their own). The walkers know a
// Buffer by that shape alone (bufferShaped), and reach its Handle through
// the pointer, so this package needs nothing from transfer: no import, no
// hook, no registration beyond msgpack's (RegisterExt).
type Handle struct {
	blk atomic.Pointer[block]

	// pending is the reference read by the msgpack decoder, waiting for
	// Peer.Decode to resolve it into memory.
	pending *Ref
	// inline is the bytes of a copied Buffer read by the msgpack decoder,
	// waiting for CopyPeer's Decode to make them the Buffer's own.
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
	wireInline          // as its bytes (CopyPeer)
)

// handleType is the type of a Buffer struct's only field.
var handleType = reflect.TypeFor[Handle]()

// bufferShaped reports whether t is a Buffer struct: a struct whose only
// field is a Handle. Only code inside this module can name Handle, so the
// Buffer types are transfer.Buffer, the tests' own, and types a user
// defines over transfer.Buffer (which msgpack doesn't know: see
// msgpackKnows).
func bufferShaped(t reflect.Type) bool {
	return t.Kind() == reflect.Struct && t.NumField() == 1 && t.Field(0).Type == handleType
}

// IsBufferType reports whether t is a Buffer struct (see bufferShaped),
// for code that inspects types for what crosses: a *Buffer crosses by
// the Peers' extension, a Buffer held by value can't.
func IsBufferType(t reflect.Type) bool { return bufferShaped(t) }

// handleIn returns the Handle of the Buffer v points to: v is a non-nil
// pointer to a bufferShaped struct, whose only field is at offset 0.
func handleIn(v reflect.Value) *Handle { return (*Handle)(v.UnsafePointer()) }

// newBufferOf returns a new, detached Buffer of the pointer type t (a
// pointer to a bufferShaped struct), and its Handle.
func newBufferOf(t reflect.Type) (reflect.Value, *Handle) {
	p := reflect.New(t.Elem())
	return p, handleIn(p)
}

// Alloc gives the new Handle h n zeroed bytes: transfer.NewBuffer. The
// memory is a segment of the process's arena of its own: shared memory
// where the platform has it, heap memory elsewhere. It fails with ErrInvalidSize for n < 0 or n > 1 TiB, or when the
// arena can't grow (the error says why).
func (h *Handle) Alloc(n int) error {
	if n < 0 || n > maxSegmentSize {
		return fmt.Errorf("%w: %d bytes", ErrInvalidSize, n)
	}
	if n == 0 {
		h.own(&block{data: []byte{}})
		return nil
	}
	blk, err := processArena().alloc(n)
	if err != nil {
		return err
	}
	h.own(blk)
	return nil
}

// Wrap gives the new Handle h the memory b, without a copy: transfer.Move.
// Wrap(nil) is an empty Buffer.
func (h *Handle) Wrap(b []byte) {
	if b == nil {
		b = []byte{}
	}
	h.own(&block{data: b})
}

// own makes h the owner of blk.
func (h *Handle) own(blk *block) { h.blk.Store(blk) }

// Bytes returns the memory h owns, or nil once it is detached.
func (h *Handle) Bytes() []byte {
	if blk := h.blk.Load(); blk != nil {
		return blk.data
	}
	return nil
}

// Len returns the length of the memory h owns, 0 once it is detached.
func (h *Handle) Len() int {
	if blk := h.blk.Load(); blk != nil {
		return len(blk.data)
	}
	return 0
}

// Detached reports whether h owns no memory.
func (h *Handle) Detached() bool { return h.blk.Load() == nil }

// Release frees the memory h owns, if any, and detaches h.
func (h *Handle) Release() {
	if blk := h.blk.Swap(nil); blk != nil {
		blk.free()
	}
}

// take detaches h and returns the block it owned, or ErrDetached.
func (h *Handle) take() (*block, error) {
	if blk := h.blk.Swap(nil); blk != nil {
		return blk, nil
	}
	return nil, ErrDetached
}

// block is one Buffer's memory and where it lives: a segment of a local
// arena (arena set), a segment adopted from a peer (remote set), or
// ordinary heap memory (neither). A block belongs to one owner at a time:
// a handle, or a Peer's table of blocks lent to the remote side.
type block struct {
	data []byte

	arena *arena
	seg   *segment
	// exposed says the segment was sent to a peer, which may have written
	// any of it.
	exposed bool

	remote *mapping
	ref    Ref // for remote blocks: the reference as the owner knows it
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
func (blk *block) localRef() Ref {
	return Ref{Segment: blk.seg.id, Length: uint64(len(blk.data))}
}
