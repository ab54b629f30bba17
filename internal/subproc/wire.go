package subproc

import (
	"context"
	"encoding/binary"
	"fmt"

	"github.com/offloadgo/offload/internal/codec"
	"github.com/offloadgo/offload/internal/outcome"
	"github.com/offloadgo/offload/internal/seam"
	"github.com/offloadgo/offload/internal/workerproc"
)

// Frame kinds between a Subprocess pool and its worker processes. The
// frame's ID is the call's sequence number on that worker, so that a reply
// is matched to its call. Inputs and outputs are raw msgpack; a frame whose
// kind has kindMoves set also carries Buffer traffic in a trailer (see
// moves.go). A worker's answers are outcomes of internal/outcome, each
// with its byte here (see answerKinds).
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
	// kindPermanent, worker to parent: the task returned an error marked
	// as not worth trying again (outcome.Permanent). Body: its message.
	kindPermanent
)

// Keep the pool's kinds clear of the cancel package's own.
var _ [workerproc.KindReserved - kindPermanent]struct{}

// answerKinds puts each outcome a worker process can report on this wire:
// the byte of its answer frame. The bytes are the protocol's
// (workerproc.ProtocolVersion); TestAnswerKindBytes pins them.
var answerKinds = outcome.Wire{
	kindResult:    outcome.Result,
	kindError:     outcome.Error,
	kindPanic:     outcome.Panic,
	kindTooLarge:  outcome.TooLarge,
	kindUnknown:   outcome.Unknown,
	kindGoexit:    outcome.Goexit,
	kindPermanent: outcome.Permanent,
}

// answerKind is k's byte on the wire. An outcome a worker process never
// reports (a node's) has none: it goes as an error, its body the message.
func answerKind(k outcome.Kind) byte { return answerKinds.Byte(k, kindError) }

// outcomeOf is the outcome an answer's byte names; the zero Kind for a
// byte that names none.
func outcomeOf(wire byte) outcome.Kind { return answerKinds.Kind(wire) }

// frameSlack is what a call frame holds beyond its input: the header with
// the trace context and the task's name, and the moves trailer. A
// connection's maximum frame is
// MaxPayload + frameSlack.
const frameSlack = 16 << 10

// maxNameLen bounds a task name in a call header; with a carrier of at
// most codec.MaxCarrier it stays inside frameSlack.
const maxNameLen = 1024

// The moves trailer (moves.go) rides in the slack too.
var _ [frameSlack - (codec.MaxCarrier + maxNameLen + 2*binary.MaxVarintLen64 + trailerFixed)]struct{}

// A call body starts with its header:
//
//	trace  uvarint length, then the caller's trace context
//	       (codec.AppendCarrier); empty when the pool has no Tracer
//	name   uvarint length, then the task's name
//
// and the input's msgpack follows. The trace field came with
// workerproc.ProtocolVersion 2: a worker of another version is refused at
// its hello, before any call.

// appendCallHeader starts a call body: the trace context (nil for none)
// and the task's name.
func appendCallHeader(b []byte, task string, trace []byte) ([]byte, error) {
	if err := checkCallHeader(task, trace); err != nil {
		return nil, err
	}
	b = binary.AppendUvarint(b, uint64(len(trace)))
	b = append(b, trace...)
	b = binary.AppendUvarint(b, uint64(len(task)))
	return append(b, task...), nil
}

// checkCallHeader says why a call header can't hold task and trace, if
// it can't.
func checkCallHeader(task string, trace []byte) error {
	switch {
	case len(task) > maxNameLen:
		return fmt.Errorf("pool: task name %.40q... is %d bytes, over %d for a worker process", task, len(task), maxNameLen)
	case len(trace) > codec.MaxCarrier:
		return fmt.Errorf("%w: task %q: %w: %d bytes, over %d", seam.ErrPayloadTooLarge, task, codec.ErrCarrierTooLarge, len(trace), codec.MaxCarrier)
	}
	return nil
}

// callHeaderLen is the length of the header appendCallHeader writes.
func callHeaderLen(task string, trace []byte) int {
	return 2*binary.MaxVarintLen64 + len(task) + len(trace)
}

// parseCall splits a call body into the task's name, its trace context
// (nil for none; not parsed) and its input.
func parseCall(body []byte) (task string, trace, input []byte, err error) {
	trace, body, ok := splitField(body, codec.MaxCarrier)
	if !ok {
		return "", nil, nil, fmt.Errorf("pool: corrupt call frame: trace context (%d bytes)", len(body))
	}
	name, input, ok := splitField(body, maxNameLen)
	if !ok {
		return "", nil, nil, fmt.Errorf("pool: corrupt call frame: task name (%d bytes)", len(body))
	}
	if len(trace) == 0 {
		trace = nil
	}
	return string(name), trace, input, nil
}

// splitField splits a uvarint-length-prefixed field of at most limit
// bytes off the front of b.
func splitField(b []byte, limit uint64) (field, rest []byte, ok bool) {
	n, k := binary.Uvarint(b)
	if k <= 0 || n > limit || uint64(len(b)-k) < n {
		return nil, nil, false
	}
	return b[k : k+int(n)], b[k+int(n):], true
}

// cancelFrame asks the worker to cancel call id because ctx ended. Its
// body is one byte, the outcome.Cause, so that the task's ctx in the
// worker process reports what its caller's did (context.Cause).
func cancelFrame(id uint64, ctx context.Context) workerproc.Frame {
	return workerproc.Frame{Kind: kindCancel, ID: id, Body: []byte{byte(outcome.CauseOf(context.Cause(ctx)))}}
}

// cancelCause is the cause a cancel frame's body names; an empty or
// unknown one is context.Canceled.
func cancelCause(body []byte) error {
	if len(body) == 1 {
		return outcome.Cause(body[0]).Err()
	}
	return context.Canceled
}
