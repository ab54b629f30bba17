package workerproc

import (
	"errors"
	"fmt"
)

// Sentinel errors, matchable with errors.Is.
var (
	// ErrFrameTooLarge: a frame's body exceeds the connection's maximum. A
	// reader returns it before allocating anything for the body; a writer
	// returns it before sending anything.
	ErrFrameTooLarge = errors.New("workerproc: frame too large")
	// ErrCorruptFrame: the stream does not hold a valid frame (bad header,
	// a stream that ends inside a frame, missing or truncated descriptors).
	ErrCorruptFrame = errors.New("workerproc: corrupt frame")
	// ErrProtocol: the worker's handshake is missing, malformed, or speaks
	// another protocol version.
	ErrProtocol = errors.New("workerproc: protocol error")
	// ErrStartTimeout: the worker sent no hello within Spec.StartTimeout.
	ErrStartTimeout = errors.New("workerproc: worker sent no hello in time")
	// ErrClosed: the connection was closed by this side.
	ErrClosed = errors.New("workerproc: connection closed")
	// ErrUnsupported: worker processes are not supported on this platform.
	// It wraps errors.ErrUnsupported.
	ErrUnsupported = fmt.Errorf("workerproc: worker processes are not supported on %s: %w", goos, errors.ErrUnsupported)
)
