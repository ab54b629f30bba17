package transfer

import "github.com/offloadgo/offload/internal/shmbuf"

// The errors are declared once, where the code that returns them lives,
// and published here through functions, as io/fs publishes its own, so
// that this package's doc reads without the machinery's names.
var (
	// ErrDetached is returned when a Buffer that was already handed over or
	// released is handed over again (or encoded, or checked).
	ErrDetached = errDetached() // "transfer: buffer is detached"

	// ErrInvalidSize is returned by NewBuffer for a negative size.
	ErrInvalidSize = errInvalidSize() // "transfer: invalid buffer size"

	// ErrNotTransferable is returned (wrapped, with the path of the value)
	// for a value that can't cross a process boundary: a channel, a func,
	// an unsafe.Pointer, a Buffer held by value or a Buffer aliased twice;
	// and, by a Subprocess or Remote pool at submission, for a task whose
	// input or output type would lose a field on the way (see
	// pool.Register).
	ErrNotTransferable = errNotTransferable() // "transfer: value cannot cross a process boundary"

	// ErrUnsupported is returned by cross-process operations on platforms
	// without shared memory segments (all but Linux, macOS and the BSDs).
	ErrUnsupported = errUnsupported() // "transfer: shared memory is not supported on this platform"
)

func errDetached() error        { return shmbuf.ErrDetached }
func errInvalidSize() error     { return shmbuf.ErrInvalidSize }
func errNotTransferable() error { return shmbuf.ErrNotTransferable }
func errUnsupported() error     { return shmbuf.ErrUnsupported }
