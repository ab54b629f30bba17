package cancel

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
