package cancel

import "errors"

// Sentinel errors, matchable with errors.Is.
var (
	// ErrFrameTooLarge: a frame's body exceeds the connection's maximum. A
	// reader returns it before allocating anything for the body; a writer
	// returns it before sending anything.
	ErrFrameTooLarge = errors.New("cancel: frame too large")
	// ErrCorruptFrame: the stream does not hold a valid frame (bad header,
	// a stream that ends inside a frame, missing or truncated descriptors).
	ErrCorruptFrame = errors.New("cancel: corrupt frame")
	// ErrProtocol: the worker's handshake is missing, malformed, or speaks
	// another protocol version.
	ErrProtocol = errors.New("cancel: protocol error")
	// ErrStartTimeout: the worker sent no hello within Spec.StartTimeout.
	ErrStartTimeout = errors.New("cancel: worker sent no hello in time")
	// ErrClosed: the connection was closed by this side.
	ErrClosed = errors.New("cancel: connection closed")
	// ErrUnsupported: worker processes are not supported on this platform.
	ErrUnsupported = errors.New("cancel: worker processes are not supported on " + goos)
)

// WithCause returns an error that matches both sentinel and cause with
// errors.Is (and errors.As), and reads "sentinel: cause". It lets a caller
// report, for instance, that a task was terminated because its deadline
// passed: errors.Is(err, ErrTerminated) && errors.Is(err, context.DeadlineExceeded).
// With a nil cause it returns sentinel; with a nil sentinel, cause.
func WithCause(sentinel, cause error) error {
	if cause == nil {
		return sentinel
	}
	if sentinel == nil {
		return cause
	}
	return &causeError{sentinel: sentinel, cause: cause}
}

// causeError is the error WithCause builds. Its Unwrap lists both errors,
// so errors.Is and errors.As walk into each.
type causeError struct {
	sentinel, cause error
}

func (e *causeError) Error() string   { return e.sentinel.Error() + ": " + e.cause.Error() }
func (e *causeError) Unwrap() []error { return []error{e.sentinel, e.cause} }
