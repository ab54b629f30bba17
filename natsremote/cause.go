package natsremote

import (
	"context"
	"errors"

	"github.com/offloadgo/offload/pool"
)

// Causes a cancel message or an ended call carries, so that the task's
// ctx on the node, and the error its caller gets, report what ended it.
const (
	causeCanceled byte = iota
	causeDeadline
	causeClosed
	causeSubmitterLost
)

// errSubmitterLost is the cause of a call a node ended because its
// submitter stopped pinging it: the submitter crashed, left, or lost the
// network.
var errSubmitterLost = errors.New("natsremote: the submitter stopped answering")

// causeCode is the code of cause, as a cancel or an end carries it.
func causeCode(cause error) byte {
	switch {
	case errors.Is(cause, errSubmitterLost):
		return causeSubmitterLost
	case errors.Is(cause, pool.ErrClosed):
		return causeClosed
	case errors.Is(cause, context.DeadlineExceeded):
		return causeDeadline
	}
	return causeCanceled
}

// causeOf is the cause a code names; an unknown code is context.Canceled.
func causeOf(code byte) error {
	switch code {
	case causeDeadline:
		return context.DeadlineExceeded
	case causeClosed:
		return pool.ErrClosed
	case causeSubmitterLost:
		return errSubmitterLost
	}
	return context.Canceled
}
