package transfer

import "github.com/offloadgo/offload/internal/shmbuf"

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
// segment until the process exits: there is deliberately no finalizer,
// because a slice from Bytes may outlive the handle and the GC can't see
// that it points into the arena.
//
// The zero Buffer is detached; use NewBuffer or Move. A Buffer is safe for
// concurrent use in the sense that hand-over, Release and the accessors are
// atomic with respect to each other; the bytes themselves are the caller's
// to synchronise.
type Buffer struct {
	// h is all a Buffer is: the machinery knows a Buffer by being a struct
	// whose only field is a Handle, and finds its Handle through the
	// pointer, so that the pool and its transports need nothing of this
	// package but the type.
	h shmbuf.Handle
}

// The msgpack extension is registered at init, like a codec registering
// itself: it fills msgpack's type table and starts nothing. A Buffer that
// plain msgpack meets fails with an error instead of being written as an
// empty struct, and a message from a worker decodes into Buffers.
func init() { shmbuf.RegisterExt((*Buffer)(nil)) }

// NewBuffer returns a Buffer of n zeroed bytes. The memory is a
// shared-memory segment of its own (a power of two of at least a page,
// reused from a freed Buffer when one of that size is at hand, else
// created: a memfd on Linux), so the Buffer can later move to a worker
// process without a copy, and reaching it gives no access to any other
// Buffer; off Linux, macOS and the BSDs it is heap memory. Each live
// Buffer holds one file descriptor (and freed ones kept for reuse hold
// theirs) against the process's RLIMIT_NOFILE. NewBuffer fails with
// ErrInvalidSize for n < 0 or n > 1 TiB, or when no segment can be made
// (the error says why: out of descriptors, say). Safe for concurrent use.
func NewBuffer(n int) (*Buffer, error) {
	b := new(Buffer)
	if err := b.h.Alloc(n); err != nil {
		return nil, err
	}
	return b, nil
}

// Move wraps b in a Buffer without copying: the caller gives b up and must
// not touch it afterwards. Within the process the Buffer moves as b itself.
// The first time it is sent to another process its bytes are
// copied once into the shared arena, which is still cheaper than encoding
// them into the message; NewBuffer avoids even that copy. Move never fails,
// which is also why it doesn't copy up front: allocating arena space could.
// Move(nil) is an empty Buffer.
func Move(b []byte) *Buffer {
	buf := new(Buffer)
	buf.h.Wrap(b)
	return buf
}

// Bytes returns the Buffer's memory, or nil once it is detached. The slice
// is valid until the Buffer is handed over or released.
func (b *Buffer) Bytes() []byte { return b.h.Bytes() }

// Len returns the Buffer's length in bytes, 0 once it is detached.
func (b *Buffer) Len() int { return b.h.Len() }

// Detached reports whether the handle no longer owns memory: it was handed
// over, or released.
func (b *Buffer) Detached() bool { return b.h.Detached() }

// Release frees the Buffer's memory (its segment returns to the arena; the
// memory of a Buffer received from another process is given back to its
// owner with the next message) and detaches the handle. Releasing a
// detached handle, or releasing twice, does nothing. Safe for concurrent
// use.
func (b *Buffer) Release() { b.h.Release() }
