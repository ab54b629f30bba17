package transfer

import "errors"

var (
	// ErrDetached is returned when a Buffer that was already handed over or
	// released is handed over again (or encoded, or checked).
	ErrDetached = errors.New("transfer: buffer is detached")

	// ErrInvalidSize is returned by NewBuffer for a negative size.
	ErrInvalidSize = errors.New("transfer: invalid buffer size")

	// ErrNotTransferable is returned (wrapped, with the path of the value)
	// for a value that can't cross a process boundary: a channel, a func,
	// an unsafe.Pointer, a Buffer held by value or a Buffer aliased twice.
	ErrNotTransferable = errors.New("transfer: value cannot cross a process boundary")

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

	// ErrUnsupported is returned by cross-process operations on platforms
	// without shared memory segments (everything but Linux).
	ErrUnsupported = errors.New("transfer: shared memory is not supported on this platform")
)
