package subproc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"runtime/debug"

	"github.com/offloadgo/offload/internal/codec"
	"github.com/offloadgo/offload/internal/outcome"
	"github.com/offloadgo/offload/internal/prof"
	"github.com/offloadgo/offload/internal/registry"
	"github.com/offloadgo/offload/internal/shmbuf"
)

// output is a call's reply before it is sealed: its outcome, the
// segments the output references, and whether Buffers were lent that the
// reply does not carry (see moves.broken).
type output struct {
	outcome.Outcome
	segs   []shmbuf.Segment
	broken bool
}

func errorReply(kind outcome.Kind, body []byte) output {
	return output{Outcome: outcome.Of(kind, body)}
}

// run runs one call in a worker process and returns its reply. Once the
// output is encoded (its Buffers moved to the pool), the input's Buffers
// that the task kept are released, so their releases go back on this very
// reply.
func (s *server) run(ctx context.Context, body []byte, moved bool) output {
	name, trace, input, err := parseCall(body)
	if err != nil {
		return errorReply(outcome.Error, []byte(err.Error()))
	}
	e, ok := registry.Lookup(name)
	if !ok || e.Invoke == nil { // unknown, or an Extern task, which no Go worker runs
		return errorReply(outcome.Unknown, fmt.Appendf(nil, "%q is not registered in worker pid %d; register tasks at package level", name, os.Getpid()))
	}
	if ctx, err = s.traced(ctx, trace); err != nil {
		return errorReply(outcome.Error, fmt.Appendf(nil, "pool: worker: call of task %q: %v", name, err))
	}
	var peer shmbuf.Peer
	if moved {
		peer = s.link.peer
	}
	out, in, panicked, err := invokeEntry(ctx, e, s.labels(name), input, peer)
	defer shmbuf.ReleaseAll(in)
	if panicked != nil || err != nil {
		shmbuf.ReleaseAll(out) // a failed task's output goes nowhere
	}
	switch {
	case panicked != nil:
		return output{Outcome: outcome.Panicked(panicked.value, panicked.stack)}
	case err != nil && moved && in == nil:
		// The input did not decode: references past the failure were
		// never read, so the pool would keep them lent. Retired, the
		// process gives them all back at once.
		return output{Outcome: outcome.Of(outcome.Error, []byte(err.Error())), broken: true}
	case err != nil:
		return output{Outcome: outcome.Failed(err)}
	}
	// Sized, but not reused once written as the parent's call bodies are:
	// measured on bench/orders' echo-json (44 MB back), reusing them here
	// made the round trip slower, not faster.
	buf := bytes.NewBuffer(make([]byte, 0, s.sizes.Guess(name, out)))
	segs, err := codec.PeerEncodeInto(buf, s.link.peer, out)
	if err != nil {
		// Nothing moved, and the output's Buffers are freed here; but an
		// output found too deep once encoded had them lent, as below.
		broken := errors.Is(err, codec.ErrTooDeep) && errors.Is(shmbuf.Check(out), shmbuf.ErrDetached)
		shmbuf.ReleaseAll(out)
		return output{Outcome: outcome.Of(outcome.Error, fmt.Appendf(nil, "pool: encode output of task %q: %v", name, err)), broken: broken}
	}
	if n := buf.Len(); n > s.maxOutput {
		// If it held Buffers (they are detached now), they were given
		// away for a reply that can't be sent.
		shmbuf.CloseGiven(segs)
		return output{Outcome: outcome.Of(outcome.TooLarge, fmt.Appendf(nil, "output of task %q is %d bytes, over MaxPayload %d", name, n, s.maxOutput)),
			broken: errors.Is(shmbuf.Check(out), shmbuf.ErrDetached)}
	}
	s.sizes.Record(name, buf.Len())
	return output{Outcome: outcome.Of(outcome.Result, buf.Bytes()), segs: segs}
}

// traced returns ctx with the trace context the call carries, if this
// worker extracts one (Main's Tracer); ctx as it is if not, or if the
// call carries none.
func (s *server) traced(ctx context.Context, trace []byte) (context.Context, error) {
	return codec.ExtractCarrier(ctx, trace, s.extract)
}

// labels returns the pprof labels of task, made once per task.
func (s *server) labels(task string) prof.Labels {
	if l, ok := s.taskLabels.Load(task); ok {
		return l.(prof.Labels)
	}
	l, _ := s.taskLabels.LoadOrStore(task, prof.New(task, "Subprocess"))
	return l.(prof.Labels)
}

// recovered is a task's panic: its value, as it will cross (see
// panicBody), and its stack.
type recovered struct {
	value any
	stack []byte
}

// invokeEntry runs a registered task on its encoded input under its pprof
// labels, recovering a
// panic on the task's own goroutine (one on a goroutine the task started
// can't be recovered: it ends the process, which the pool reports). With
// a Peer the input is decoded by it, its references becoming Buffers; in
// is the decoded input, for the caller to release what the task kept, or
// nil if it did not decode.
func invokeEntry(ctx context.Context, e registry.Entry, labels prof.Labels, input []byte, peer shmbuf.Peer) (out, in any, p *recovered, err error) {
	labels.Set()
	defer func() {
		prof.Clear()
		if v := recover(); v != nil {
			p = &recovered{value: v, stack: debug.Stack()}
		}
	}()
	out, err = e.Invoke(ctx, func(ptr any) error {
		in = ptr
		if err := codec.PeerUnmarshal(peer, input, ptr); err != nil {
			in = nil // Decode released what it resolved
			return fmt.Errorf("pool: decode input of task %q: %w", e.Name, err)
		}
		return nil
	})
	return out, in, nil, err
}
