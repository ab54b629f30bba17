package outcome

import (
	"context"
	"errors"

	"github.com/offloadgo/offload/internal/seam"
)

// Cause is why a call's ctx ended, as a cancel (or an Ended outcome)
// carries it to where the task runs, or back: so that the task's ctx
// there, and the caller's error, report what ended it (context.Cause).
// Its values are wire bytes of every transport (pinned by
// TestCauseBytes); a transport may carry more causes of its own above
// them (a node's lost submitter).
type Cause byte

const (
	// Canceled: context.Canceled, or any cause not below.
	Canceled Cause = iota
	// Deadline: context.DeadlineExceeded.
	Deadline
	// Closed: the pool closed (seam.ErrClosed).
	Closed

	// NumCauses is the first code a transport may give a cause of its
	// own.
	NumCauses
)

// CauseOf is the Cause of cause, an ended ctx's context.Cause.
func CauseOf(cause error) Cause {
	switch {
	case errors.Is(cause, seam.ErrClosed):
		return Closed
	case errors.Is(cause, context.DeadlineExceeded):
		return Deadline
	}
	return Canceled
}

// Err is the error c names; a code of no Cause is context.Canceled.
func (c Cause) Err() error {
	switch c {
	case Deadline:
		return context.DeadlineExceeded
	case Closed:
		return seam.ErrClosed
	}
	return context.Canceled
}

// String is c's word in a message a program of another language reads
// (sdk/PROTOCOL.md): "canceled", "deadline" or "closed".
func (c Cause) String() string {
	switch c {
	case Deadline:
		return "deadline"
	case Closed:
		return "closed"
	}
	return "canceled"
}
