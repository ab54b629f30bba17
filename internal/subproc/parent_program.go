package subproc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/offloadgo/offload/internal/blobjson"
	"github.com/offloadgo/offload/internal/codec"
	"github.com/offloadgo/offload/internal/outcome"
	"github.com/offloadgo/offload/internal/seam"
	"github.com/offloadgo/offload/internal/workerproc"
)

// The pool's side of the program dialect (program_wire.go): a carrier
// whose Command is set runs every call in a program of another language.
// Supervision is the Go dialect's, the runner's: only the call's body, the
// answer's reading and the cancel differ, and they branch here.

// encodeProgram is Encode for a program: the call's whole body.
func (sp *ProcessCarrier) encodeProgram(task string, trace []byte, in any) ([]byte, error) {
	if err := checkCallHeader(task, trace); err != nil {
		return nil, err
	}
	input, field, blob, err := blobjson.Marshal(in)
	if err != nil {
		return nil, fmt.Errorf("pool: encode input of task %q as JSON: %w", task, err)
	}
	if err := sp.checkSize(task, len(input)+len(blob)); err != nil {
		return nil, err
	}
	h := callHeader{Task: task, Input: input, Blob: field}
	if trace != nil {
		if h.Trace, err = codec.ParseCarrier(trace); err != nil {
			return nil, fmt.Errorf("pool: task %q: trace context: %w", task, err)
		}
	}
	header, err := json.Marshal(h)
	if err != nil {
		return nil, fmt.Errorf("pool: encode call of task %q: %w", task, err)
	}
	body := sp.bodies.Get(messageLenSize + len(header) + len(blob))
	return appendMessage(body, header, blob), nil
}

// receiveProgram is receive for a program's answer f to m. An answer the
// dialect does not allow kills the program, which is replaced; the call
// fails.
func (r *runner) receiveProgram(l *child, m *seam.Call, f workerproc.Frame, dying bool) error {
	m.Handover.Reply()
	closeFDs(f.FDs) // a program sends none; any it did are not read
	recycle, err := r.programAnswer(m, f)
	switch {
	case dying:
		r.bury(l)
	case err != nil && errors.Is(err, errMalformed):
		l.proc.Kill()
		r.retire(l, seam.Retired)
		return fmt.Errorf("pool: worker %d (pid %d, %q) sent a bad answer to task %q: %w", r.id, l.pid, r.sp.command, m.Task, err)
	case recycle:
		r.retire(l, seam.Recycled)
	default:
		r.recycle(l)
	}
	return err
}

// programAnswer turns answer f to m into m's output or its error, and
// says whether the program asked to be replaced.
func (r *runner) programAnswer(m *seam.Call, f workerproc.Frame) (recycle bool, err error) {
	k := programAnswers.Kind(f.Kind)
	if k == 0 || len(f.FDs) > 0 {
		return false, fmt.Errorf("%w: frame of kind %#x with %d descriptors", errMalformed, f.Kind, len(f.FDs))
	}
	var h answerHeader
	blob, err := splitMessage(f.Body, &h)
	if err != nil {
		return false, err
	}
	switch k {
	case outcome.Result:
		if len(h.Output) == 0 {
			return false, fmt.Errorf("%w: a result without an output", errMalformed)
		}
		// The frame's limit leaves room for the header: the output itself
		// is held to MaxPayload, as a Go worker holds it.
		if n := len(h.Output) + len(blob); n > r.sp.maxPayload {
			return h.Recycle, fmt.Errorf("%w: output of task %q is %d bytes, over MaxPayload %d", seam.ErrPayloadTooLarge, m.Task, n, r.sp.maxPayload)
		}
		if err := blobjson.Unmarshal(h.Output, h.Blob, blob, m.Out); err != nil {
			return h.Recycle, fmt.Errorf("pool: decode output of task %q from JSON: %w", m.Task, err)
		}
		return h.Recycle, nil
	case outcome.Raised:
		return h.Recycle, outcome.Raise(h.Type, h.Message, h.Traceback).Err(outcome.Where{Task: m.Task})
	}
	return h.Recycle, outcome.Of(k, []byte(h.Message)).Err(outcome.Where{Task: m.Task})
}

// askStop asks l to stop call id because ctx ended: a cancel frame, and
// for a program SIGINT after it (PROTOCOL.md's cancel).
func (r *runner) askStop(l *child, id uint64, ctx context.Context) {
	if !r.sp.program {
		_ = l.proc.Conn().WriteFrame(cancelFrame(id, ctx))
		return
	}
	if l.proc.Conn().WriteFrame(programCancel(id, ctx)) == nil {
		l.proc.Interrupt()
	}
}
