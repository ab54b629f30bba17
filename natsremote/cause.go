package natsremote

import (
	"errors"

	"github.com/offloadgo/offload/internal/outcome"
)

// Causes a cancel message or an ended call carries, so that the task's
// ctx on the node, and the error its caller gets, report what ended it:
// outcome's Causes, and one of this transport's own.
const causeSubmitterLost = byte(outcome.NumCauses)

// errSubmitterLost is the cause of a call a node ended because its
// submitter stopped pinging it: the submitter crashed, left, or lost the
// network.
var errSubmitterLost = errors.New("natsremote: the submitter stopped answering")

// causeCode is the code of cause, as a cancel or an end carries it.
func causeCode(cause error) byte {
	if errors.Is(cause, errSubmitterLost) {
		return causeSubmitterLost
	}
	return byte(outcome.CauseOf(cause))
}

// causeOf is the cause a code names; an unknown code is context.Canceled.
func causeOf(code byte) error {
	if code == causeSubmitterLost {
		return errSubmitterLost
	}
	return outcome.Cause(code).Err()
}
