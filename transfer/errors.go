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

	// ErrUnsupported is returned by cross-process operations on platforms
	// without shared memory segments (everything but Linux).
	ErrUnsupported = errors.New("transfer: shared memory is not supported on this platform")
)
