package pool

import (
	"fmt"

	"github.com/offloadgo/offload/internal/codec"
)

// startSpan starts the task's span as the pool takes it in, on the
// submitter's goroutine (see Tracer): the task's context derives from the
// span's. A task that crosses to a worker process or a node carries the
// trace context, encoded here, before admission, so that one too large
// fails at once and costs no slot.
func (c *call[In, Out]) startSpan(t Tracer, iso Isolation, crosses bool) error {
	ctx, span := t.StartTask(c.ctx, TaskInfo{Name: c.def.name, Isolation: iso})
	if ctx != nil {
		c.ctx = ctx
	}
	c.span = span
	if !crosses {
		return nil
	}
	carrier := map[string]string{}
	t.Inject(c.ctx, carrier)
	if len(carrier) == 0 {
		return nil // nothing to continue: send nothing
	}
	c.trace = codec.AppendCarrier(nil, carrier)
	if len(c.trace) > codec.MaxCarrier {
		return fmt.Errorf("%w: the trace context of task %q is %d bytes encoded, over %d (too much baggage?)",
			ErrPayloadTooLarge, c.def.name, len(c.trace), codec.MaxCarrier)
	}
	return nil
}

// endSpan ends the task's span, if it has one still, with the error its
// caller got. Whoever resolved the future did so under the pool's lock
// (fail) or on this goroutine (conclude), before this runs outside it.
func (c *call[In, Out]) endSpan() {
	if c.span == nil {
		return
	}
	c.span.End(c.err)
	c.span = nil
}
