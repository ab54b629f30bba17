package workerproc

import (
	"strings"
	"unsafe"
)

// largeBody is the body size from which the reader allocates without
// zeroing (see newBody).
const largeBody = 1 << 20

// newBody returns a slice of n bytes for a frame body that the reader
// fills entirely before anyone sees it (a frame cut short is dropped
// whole). A large one is allocated without zeroing: make would clear
// every byte of a reused heap span only to have the pipe overwrite it, a
// full extra pass over a 44 MiB input that cost the worker as much as
// reading it. The standard library allocates unzeroed memory only for its
// own builders, so newBody takes a strings.Builder's. Were Grow to zero
// it, newBody would only be slower, never wrong.
//
// Not under -race: there, reading a 72 MiB input into such memory took a
// worker with GOMAXPROCS 1 over 30 s, against 11 s into zeroed memory
// (TestHeldSubprocessFutureDoesNotKeepItsEncodedInput; why is not known).
func newBody(n int) []byte {
	if n < largeBody || raceEnabled {
		return make([]byte, n)
	}
	var b strings.Builder
	b.Grow(n)
	b.WriteByte(0) // a string of one byte, whose data starts the n
	return unsafe.Slice(unsafe.StringData(b.String()), n)
}
