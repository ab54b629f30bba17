package pool

import (
	"encoding/binary"
	"fmt"

	"github.com/offloadgo/offload/cancel"
)

// Frame kinds between a Subprocess pool and its worker processes. The
// frame's ID is the call's sequence number on that worker, so that a reply
// is matched to its call. Inputs and outputs are raw msgpack; a frame whose
// kind has kindMoves set also carries Buffer traffic in a trailer (see
// moves.go).
const (
	// kindCall, parent to worker: run a task. Body: callHeader + input.
	kindCall byte = iota + 1
	// kindCancel, parent to worker: cancel the call's ctx. Empty body.
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
)

// Keep the pool's kinds clear of the cancel package's own.
var _ [cancel.KindReserved - kindUnknown]struct{}

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

// panicBody encodes a panic's value and stack.
func panicBody(value string, stack []byte) []byte {
	b := binary.AppendUvarint(make([]byte, 0, 10+len(value)+len(stack)), uint64(len(value)))
	b = append(b, value...)
	return append(b, stack...)
}

// parsePanic reads a panicBody; a malformed one gives the whole body as the
// value, so that nothing the worker said is lost.
func parsePanic(body []byte) (value string, stack []byte) {
	n, k := binary.Uvarint(body)
	if k <= 0 || uint64(len(body)-k) < n {
		return string(body), nil
	}
	return string(body[k : k+int(n)]), body[k+int(n):]
}
