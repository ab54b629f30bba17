package natsremote

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/offloadgo/offload/internal/codec"
	"github.com/offloadgo/offload/internal/outcome"
	"github.com/offloadgo/offload/internal/registry"
	"github.com/offloadgo/offload/internal/shmbuf"
	"github.com/offloadgo/offload/pool"
)

// nodeCall is a call a node runs. Its fields but ctx and end are guarded
// by nodeServer.mu.
type nodeCall struct {
	id, token uint64
	reply     string // where its answer goes
	ctx       context.Context
	end       context.CancelCauseFunc // ends the task's ctx (and its deadline's timer)
	// watchdog ends the call if its submitter stops pinging it.
	watchdog *time.Timer
	// quiet: the submitter cancelled the call, so it wants no answer
	// but a bare "ended" (see finish).
	quiet bool
	// freed: its slot in the node's pool is free; answeredEarly: its
	// answer went out before that (its ctx ended before its task
	// returned), with free slots that did not count its own.
	freed, answeredEarly bool
	// program: the task is a program's (kindProgramCall), whose output
	// goes back as a program value.
	program bool
}

// onMessage takes the messages on the node's subject, in the order the
// submitters sent them: calls, cancels, pings. A ping is answered after
// the calls sent before it were taken.
func (s *nodeServer) onMessage(msg *nats.Msg) {
	h, body, err := parseHeader(msg.Data)
	if err != nil {
		// Not from a submitter of this protocol version, which would not
		// have picked this node: its adverts are another version.
		s.ignored.Add(1)
		return
	}
	switch h.kind {
	case kindCall, kindProgramCall:
		if msg.Reply != "" {
			s.onCall(msg.Reply, h, body)
		}
	case kindCancel:
		s.onCancel(h)
	case kindPing:
		if msg.Reply != "" {
			s.onPing(msg.Reply, h, body)
		}
	}
}

// onCall admits a call into the node's pool, or answers why not: "full"
// when no slot is free (or the node is leaving), "late" when it came
// after its start bound, "unknown" when the node lacks the task or has
// another version of it.
func (s *nodeServer) onCall(reply string, h header, body []byte) {
	head, input, err := parseCallHead(body)
	if err != nil {
		s.answer(reply, h, fmt.Appendf(nil, "node %s: %v", s.id, err), answerKind(outcome.Unknown))
		return
	}
	if head.startBy != 0 && uint64(time.Now().UnixNano()) > head.startBy {
		s.answer(reply, h, nil, kindLate) // its submitter may have given up on us: never start it
		return
	}
	program := h.kind == kindProgramCall
	var submit submitFunc
	if program {
		submit, err = s.programSubmit(head.task, input)
	} else {
		submit, err = s.goSubmit(head, input)
	}
	if err != nil {
		s.answer(reply, h, []byte(err.Error()), answerKind(outcome.Unknown))
		return
	}
	s.mu.Lock()
	switch {
	case s.leaving:
		s.mu.Unlock()
		s.answer(reply, h, nil, kindFull)
		return
	case s.calls[h.token] != nil:
		s.mu.Unlock()
		s.answer(reply, h, []byte("a call with this token runs already"), answerKind(outcome.Unknown))
		return
	}
	s.running.Add(1)
	s.mu.Unlock()
	c := &nodeCall{id: h.id, token: h.token, reply: reply, program: program}
	c.ctx, c.end = callContext(h.arg)
	ctx, err := s.traced(c.ctx, head.trace)
	var wait func() (any, error)
	if err == nil {
		wait, err = submit(ctx, func() { s.slotFreed(c) })
	}
	if err != nil {
		s.refused(c, err)
		return
	}
	heartbeat := time.Duration(min(head.heartbeat, uint64(maxHeartbeat)))
	s.mu.Lock()
	s.calls[c.token] = c
	c.watchdog = time.AfterFunc(3*max(heartbeat, minHeartbeat), func() { c.end(errSubmitterLost) })
	s.mu.Unlock()
	go s.finish(c, wait)
}

// submitFunc submits a call the node takes to its pool, with the task's
// ctx, and returns a wait for its output; freed hears when its slot is
// free again (see registry.Entry.Submit).
type submitFunc func(ctx context.Context, freed func()) (wait func() (any, error), err error)

// goSubmit is how a call to a Go task (head's) with input, msgpack, goes
// to the node's pool; an error says why the node lacks the task: the
// answer "unknown".
func (s *nodeServer) goSubmit(head callHead, input []byte) (submitFunc, error) {
	e, ok := registry.Lookup(head.task)
	switch {
	case s.program != "":
		return nil, fmt.Errorf("node %s runs a program of another language (%s), which serves no Go task such as %q", s.id, s.program, head.task)
	case !ok:
		return nil, fmt.Errorf("task %q is not registered on node %s", head.task, s.id)
	case e.Fingerprint != head.fingerprint:
		return nil, fmt.Errorf("node %s has another version of task %q: its input or output type differs (another build)", s.id, head.task)
	}
	return func(ctx context.Context, freed func()) (func() (any, error), error) {
		return e.Submit(ctx, s.local, func(in any) error { return decodeInput(head.task, input, in) }, freed)
	}, nil
}

// traced returns ctx with the trace context a call carries, if the node
// extracts one (ServeOptions.Local.Tracer); ctx as it is if not, or if
// the call carries none.
func (s *nodeServer) traced(ctx context.Context, trace []byte) (context.Context, error) {
	t := s.o.Local.Tracer
	if t == nil {
		return ctx, nil
	}
	ctx, err := codec.ExtractCarrier(ctx, trace, t.Extract)
	if err != nil {
		return nil, fmt.Errorf("node %s: %w", s.id, err)
	}
	return ctx, nil
}

// slotFreed hears from the node's pool that c's slot is free. Submitters
// that may wait for a slot are told now rather than at the next heartbeat:
// those turned away since the last advert, and the one whose answer to c
// went out before the slot freed (its ctx ended before its task returned),
// which counted the slot as taken.
func (s *nodeServer) slotFreed(c *nodeCall) {
	s.mu.Lock()
	c.freed = true
	tell := s.owesAdvert || c.answeredEarly
	s.mu.Unlock()
	if tell {
		s.advertSoon()
	}
}

// callContext is a call's ctx: its deadline, if it has one (Unix ns), and
// a cancel; end stops both.
func callContext(deadline uint64) (context.Context, context.CancelCauseFunc) {
	base, stop := context.Background(), context.CancelFunc(func() {})
	if deadline != 0 {
		base, stop = context.WithDeadline(base, time.Unix(0, int64(min(deadline, 1<<63-1))))
	}
	ctx, cancel := context.WithCancelCause(base)
	return ctx, func(cause error) { cancel(cause); stop() }
}

// decodeInput decodes a call's input into in, a pointer to the task's
// input type: Buffers in it arrive as copies.
func decodeInput(task string, input []byte, in any) error {
	var err error
	if shmbuf.CanHold(reflect.TypeOf(in).Elem()) {
		err = codec.PeerUnmarshal(shmbuf.CopyPeer{}, input, in)
	} else {
		err = codec.Unmarshal(input, in)
	}
	if err != nil {
		return fmt.Errorf("pool: decode input of task %q: %w", task, err)
	}
	return nil
}

// refused answers a call the node's pool did not take: "full" when it had
// no slot (or closed), the ctx's end if the deadline had passed, else the
// error (an input that did not decode).
func (s *nodeServer) refused(c *nodeCall, err error) {
	defer s.running.Done()
	defer c.end(nil)
	h := header{id: c.id, token: c.token}
	switch {
	case errors.Is(err, pool.ErrQueueFull) || errors.Is(err, pool.ErrClosed):
		s.answer(c.reply, h, nil, kindFull)
	case errors.Is(err, pool.ErrUnknownTask):
		// The node's pool lacks the task (a program that does not serve
		// it): nothing ran, and the submitter tries another node.
		s.answer(c.reply, h, s.fit(fmt.Appendf(nil, "node %s: %v", s.id, err)), answerKind(outcome.Unknown))
	case c.ctx.Err() != nil:
		s.answer(c.reply, h, []byte{causeCode(context.Cause(c.ctx))}, answerKind(outcome.Ended))
	default:
		s.answer(c.reply, h, s.fit([]byte(err.Error())), answerKind(outcome.Error))
	}
}

// answer sends an answer without a result to a call (its ID and token in
// h), with the node's free slots; under mu, as finish does (see
// owesAdvert: "full" says there is no room, whatever the figure).
func (s *nodeServer) answer(reply string, h header, body []byte, kind byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	h.kind, h.arg = kind, uint64(s.saying(s.free(), kind == kindFull))
	_ = s.nc.Publish(reply, append(appendHeader(make([]byte, 0, headerLen+len(body)), h), body...))
}

// saying notes that the node is about to say it has free slots (full:
// that it has no room, whatever free is) and returns free: saying "no
// room" owes an advert (see owesAdvert). s.mu is held.
func (s *nodeServer) saying(free int, full bool) int {
	if free == 0 || full {
		s.owesAdvert = true
	}
	return free
}

// onCancel ends a call whose caller gave up, if the cancel carries the
// call's token; it wants no answer.
func (s *nodeServer) onCancel(h header) {
	s.mu.Lock()
	c := s.calls[h.token]
	if c != nil && c.id == h.id {
		c.quiet = true
	} else {
		c = nil
	}
	s.mu.Unlock()
	if c != nil {
		c.end(causeOf(byte(h.arg)))
	}
}

// onPing answers a submitter's ping with the node's status, renews the
// watchdogs of the listed calls it runs, and names those it does not have
// (their answers went out before this pong, or the calls never came).
func (s *nodeServer) onPing(reply string, h header, body []byte) {
	listed, err := parseListed(body)
	if err != nil {
		return
	}
	heartbeat := time.Duration(min(h.arg, uint64(maxHeartbeat)))
	var missing []uint64
	s.mu.Lock()
	defer s.mu.Unlock() // held while the pong goes out: see finish
	for _, l := range listed {
		if c := s.calls[l.token]; c != nil && c.id == l.id {
			c.watchdog.Reset(3 * max(heartbeat, minHeartbeat))
		} else {
			missing = append(missing, l.id)
		}
	}
	st := s.status(s.leaving)
	s.saying(st.free, false)
	if len(s.pongedTo) < maxPongedTo {
		s.pongedTo[reply] = true
	}
	pong := appendHeader(make([]byte, 0, headerLen+statusLen+8*len(missing)), header{kind: kindPong, id: h.id, arg: uint64(st.free), token: h.token})
	_ = s.nc.Publish(reply, appendIDs(appendStatus(pong, st), missing))
}
