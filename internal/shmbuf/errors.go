package shmbuf

import (
	"errors"
	"fmt"
)

// The errors a Buffer's owner sees. Package transfer publishes them under
// the same names (its docs say when each is returned); they are declared
// here, once, because the code that returns them is here.
var (
	ErrDetached        = errors.New("transfer: buffer is detached")
	ErrInvalidSize     = errors.New("transfer: invalid buffer size")
	ErrNotTransferable = errors.New("transfer: value cannot cross a process boundary")
	ErrUnsupported     = errors.New("transfer: shared memory is not supported on this platform")
)

// Errors of the plumbing between processes, matchable with errors.Is.
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
	// ErrTooDeep is returned (wrapped) by ValidateMessage for a message
	// whose arrays and maps nest more than MaxDepth deep. It wraps
	// ErrBadMessage: to the receiver such a message is malformed.
	ErrTooDeep = fmt.Errorf("%w: arrays and maps nested more than %d deep", ErrBadMessage, MaxDepth)
)
