package natsjobs

import (
	"context"
	"fmt"
	"strings"

	"github.com/nats-io/nats.go"

	"github.com/offloadgo/offload/internal/codec"
	"github.com/offloadgo/offload/pool"
)

// headerTrace prefixes the headers that carry the enqueuer's trace
// context with its job (Offload-Trace-traceparent, ...): the carrier of
// Options.Tracer's Inject, one header per key.
const headerTrace = "Offload-Trace-"

// traceEnqueue starts the enqueue's span (a pool.JobTracer's) and stores
// the trace context of ctx in msg's headers, as the pool sends a call's
// to a worker process. The returned end ends the span with the
// enqueue's error; a carrier over codec.MaxCarrier fails the enqueue
// with pool.ErrPayloadTooLarge, as it fails a call.
func (q *Queue) traceEnqueue(ctx context.Context, task string, id ID, msg *nats.Msg) (end func(error), err error) {
	t := q.o.Tracer
	if t == nil {
		return func(error) {}, nil
	}
	end = func(error) {}
	if jt, ok := t.(pool.JobTracer); ok {
		var span pool.TaskSpan
		if c, s := jt.StartEnqueue(ctx, pool.JobInfo{Queue: q.o.Name, Task: task, ID: string(id)}); c != nil {
			ctx, span = c, s
		}
		if span != nil {
			end = span.End
		}
	}
	carrier := map[string]string{}
	t.Inject(ctx, carrier)
	size := 0
	for k, v := range carrier {
		size += len(k) + len(v)
		msg.Header.Set(headerTrace+k, v)
	}
	if size > codec.MaxCarrier {
		// Enqueue prefixes it, and undoes a Key's record.
		err = fmt.Errorf("the trace context is %d bytes, over %d (too much baggage?): %w",
			size, codec.MaxCarrier, pool.ErrPayloadTooLarge)
		end(err)
		return nil, err
	}
	return end, nil
}

// traceRun returns ctx with the trace context stored with the attempt's
// job (Options.Tracer's Extract), and the attempt's span (a
// pool.JobTracer's) started in it; the returned end ends the span. A
// job's headers come from elsewhere: a carrier over codec.MaxCarrier is
// not read, and a Tracer that panics on it leaves the attempt untraced.
func (a *attempt) traceRun(ctx context.Context) (out context.Context, end func(error)) {
	out, end = ctx, func(error) {}
	t := a.s.q.o.Tracer
	if t == nil {
		return out, end
	}
	carrier, size := map[string]string{}, 0
	for k, v := range a.m.Headers() {
		if key, ok := strings.CutPrefix(k, headerTrace); ok && len(v) > 0 {
			carrier[key] = v[0]
			size += len(key) + len(v[0])
		}
	}
	if size > codec.MaxCarrier {
		return out, end
	}
	defer func() {
		if r := recover(); r != nil {
			out, end = ctx, func(error) {}
			a.s.log.Warn("natsjobs: the Tracer panicked; the attempt runs untraced", "queue", a.s.q.o.Name, "job", string(a.id), "panic", fmt.Sprint(r))
		}
	}()
	if len(carrier) > 0 {
		if c := t.Extract(ctx, carrier); c != nil {
			out = c
		}
	}
	if jt, ok := t.(pool.JobTracer); ok {
		c, span := jt.StartRun(out, pool.JobInfo{Queue: a.s.q.o.Name, Task: a.task, ID: string(a.id), Attempt: a.rec.Attempt})
		if c != nil {
			out = c
		}
		if span != nil {
			end = span.End
		}
	}
	return out, end
}

// copyTrace copies the trace context stored with a job into to: a dead
// job's copy keeps it, so that a Retry runs in the enqueuer's trace.
func copyTrace(to, from nats.Header) {
	for k, v := range from {
		if strings.HasPrefix(k, headerTrace) && len(v) > 0 {
			to.Set(k, v[0])
		}
	}
}
