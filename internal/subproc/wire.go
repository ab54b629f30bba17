package subproc

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/offloadgo/offload/internal/transport"
	"github.com/offloadgo/offload/internal/workerproc"
)

// Frame kinds between a Subprocess pool and its worker processes. The
// frame's ID is the call's sequence number on that worker, so that a reply
// is matched to its call. Inputs and outputs are raw msgpack; a frame whose
// kind has kindMoves set also carries Buffer traffic in a trailer (see
// moves.go).
const (
	// kindCall, parent to worker: run a task. Body: callHeader + input.
	kindCall byte = iota + 1
	// kindCancel, parent to worker: cancel the call's ctx. Body: one
	// byte, the cause (see cancelFrame); empty means context.Canceled.
	kindCancel
	// kindResult, worker to parent: the task returned nil. Body: output.
	kindResult
	// kindError, worker to parent: the task returned an error (or its
	// input would not decode, or its output would not encode). Body: the
	// error's message.
	kindError
	// kindPanic, worker to parent: the task panicked. Body: uvarint length
	// of the value's text, the text, then the stack.
	kindPanic
	// kindTooLarge, worker to parent: the output is over MaxPayload. Body:
	// a message.
	kindTooLarge
	// kindUnknown, worker to parent: the worker lacks the task. Body: a
	// message.
	kindUnknown
	// kindGoexit, worker to parent: the task called runtime.Goexit
	// instead of returning. Empty body.
	kindGoexit
)

// Keep the pool's kinds clear of the cancel package's own.
var _ [workerproc.KindReserved - kindGoexit]struct{}

// frameSlack is what a call frame holds beyond its input: the header with
// the task's name. A connection's maximum frame is MaxPayload + frameSlack.
const frameSlack = 4096

// maxNameLen bounds a task name in a call header, well inside frameSlack.
const maxNameLen = 1024

// appendCallHeader starts a call body: the uvarint length of the task's
// name, then the name. The input's msgpack follows.
func appendCallHeader(b []byte, task string) ([]byte, error) {
	if len(task) > maxNameLen {
		return nil, fmt.Errorf("pool: task name %.40q... is %d bytes, over %d for a worker process", task, len(task), maxNameLen)
	}
	b = binary.AppendUvarint(b, uint64(len(task)))
	return append(b, task...), nil
}

// parseCall splits a call body into the task's name and its input.
func parseCall(body []byte) (task string, input []byte, err error) {
	n, k := binary.Uvarint(body)
	if k <= 0 || n > maxNameLen || uint64(len(body)-k) < n {
		return "", nil, fmt.Errorf("pool: corrupt call frame (%d bytes)", len(body))
	}
	return string(body[k : k+int(n)]), body[k+int(n):], nil
}

// Causes a cancel frame carries, so that the task's ctx in the worker
// process reports what its caller's did (context.Cause): the worker is the
// same binary, so it has the same sentinels. A cause of any other kind
// arrives as context.Canceled.
const (
	causeCanceled byte = iota
	causeDeadline
	causeClosed
)

// cancelFrame asks the worker to cancel call id because ctx ended.
func cancelFrame(id uint64, ctx context.Context) workerproc.Frame {
	cause := context.Cause(ctx)
	code := causeCanceled
	switch {
	case errors.Is(cause, transport.ErrClosed):
		code = causeClosed
	case errors.Is(cause, context.DeadlineExceeded):
		code = causeDeadline
	}
	return workerproc.Frame{Kind: kindCancel, ID: id, Body: []byte{code}}
}

// cancelCause is the cause a cancel frame's body names.
func cancelCause(body []byte) error {
	if len(body) == 1 {
		switch body[0] {
		case causeDeadline:
			return context.DeadlineExceeded
		case causeClosed:
			return transport.ErrClosed
		}
	}
	return context.Canceled
}
