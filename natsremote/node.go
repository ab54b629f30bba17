package natsremote

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/offloadgo/offload/internal/codec"
	"github.com/offloadgo/offload/internal/registry"
	"github.com/offloadgo/offload/internal/xfer"
	"github.com/offloadgo/offload/pool"
)

// callKey names a call on a node: its submitter's inbox and its ID there.
type callKey struct {
	inbox string
	id    uint64
}

// serverCall is a call a node runs. Its fields but ctx and end are
// guarded by server.mu.
type serverCall struct {
	key callKey
	ctx context.Context
	end context.CancelCauseFunc // ends the task's ctx (and its deadline's timer)
	// watchdog ends the call if its submitter stops pinging it.
	watchdog *time.Timer
	// quiet: the submitter cancelled the call, so it wants no answer.
	quiet bool
}

// onMessage takes the messages on the node's subject, in the order the
// submitters sent them: calls, cancels, pings. A ping is answered after
// the calls sent before it were taken.
func (s *server) onMessage(msg *nats.Msg) {
	h, body, err := parseHeader(msg.Data)
	if err != nil || msg.Reply == "" {
		// Not from a submitter of this protocol version, which would
		// not have picked this node: its adverts are another version.
		s.o.Logger.Warn("natsremote: ignoring a bad message", "pool", s.o.Pool, "node", s.id, "err", err)
		return
	}
	switch h.kind {
	case kindCall:
		s.onCall(msg.Reply, h, body)
	case kindCancel:
		s.onCancel(callKey{msg.Reply, h.id}, causeOf(byte(h.arg)))
	case kindPing:
		s.onPing(msg.Reply, h, body)
	}
}

// onCall admits a call into the node's pool, or answers why not: "full"
// when no slot is free (or the node is leaving), "unknown" when the node
// lacks the task or has another version of it.
func (s *server) onCall(inbox string, h header, body []byte) {
	head, input, err := parseCallHead(body)
	if err != nil {
		s.answer(inbox, h.id, kindUnknown, fmt.Appendf(nil, "node %s: %v", s.id, err))
		return
	}
	e, ok := registry.Lookup(head.task)
	switch {
	case !ok:
		s.answer(inbox, h.id, kindUnknown, fmt.Appendf(nil, "task %q is not registered on node %s", head.task, s.id))
		return
	case e.Fingerprint != head.fingerprint:
		s.answer(inbox, h.id, kindUnknown, fmt.Appendf(nil,
			"node %s has another version of task %q: its input or output type differs (another build)", s.id, head.task))
		return
	}
	s.mu.Lock()
	if s.leaving {
		s.turnedAway = true
		s.mu.Unlock()
		s.answer(inbox, h.id, kindFull, nil)
		return
	}
	s.running.Add(1)
	s.mu.Unlock()
	c := &serverCall{key: callKey{inbox, h.id}}
	c.ctx, c.end = callContext(h.arg)
	wait, err := e.Submit(c.ctx, s.local, func(in any) error { return decodeInput(head.task, input, in) })
	if err != nil {
		s.refused(c, err)
		return
	}
	heartbeat := time.Duration(min(head.heartbeat, uint64(maxHeartbeat)))
	s.mu.Lock()
	s.calls[c.key] = c
	c.watchdog = time.AfterFunc(3*max(heartbeat, minHeartbeat), func() { c.end(errSubmitterLost) })
	s.mu.Unlock()
	go s.finish(c, wait)
}

// callContext is a call's ctx: its deadline, if it has one (Unix ns), and
// a cancel; end stops both.
func callContext(deadline uint64) (context.Context, context.CancelCauseFunc) {
	base, stop := context.Background(), context.CancelFunc(func() {})
	if deadline != 0 {
		base, stop = context.WithDeadline(base, time.Unix(0, int64(deadline)))
	}
	ctx, cancel := context.WithCancelCause(base)
	return ctx, func(cause error) { cancel(cause); stop() }
}

// decodeInput decodes a call's input into in, a pointer to the task's
// input type: Buffers in it arrive as copies.
func decodeInput(task string, input []byte, in any) error {
	var err error
	if xfer.CanHold(reflect.TypeOf(in).Elem()) {
		err = codec.PeerUnmarshal(xfer.CopyPeer, input, in)
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
func (s *server) refused(c *serverCall, err error) {
	defer s.running.Done()
	defer c.end(nil)
	switch {
	case errors.Is(err, pool.ErrQueueFull) || errors.Is(err, pool.ErrClosed):
		s.mu.Lock()
		s.turnedAway = true
		s.mu.Unlock()
		s.answer(c.key.inbox, c.key.id, kindFull, nil)
	case c.ctx.Err() != nil:
		s.answer(c.key.inbox, c.key.id, kindEnded, []byte{causeCode(context.Cause(c.ctx))})
	default:
		s.answer(c.key.inbox, c.key.id, kindError, []byte(err.Error()))
	}
}

// answer sends an answer without a result, with the node's free slots.
func (s *server) answer(inbox string, id uint64, kind byte, body []byte) {
	_ = s.nc.Publish(inbox, append(appendHeader(make([]byte, 0, headerLen+len(body)), kind, id, uint64(s.free())), body...))
}

// onCancel ends a call whose caller gave up, with cause; it wants no
// answer.
func (s *server) onCancel(key callKey, cause error) {
	s.mu.Lock()
	c := s.calls[key]
	if c != nil {
		c.quiet = true
	}
	s.mu.Unlock()
	if c != nil {
		c.end(cause)
	}
}

// onPing renews the watchdogs of the calls a submitter still waits for
// and answers with those the node does not have (their answers went out
// before this pong, or the calls never came).
func (s *server) onPing(inbox string, h header, body []byte) {
	ids, err := parseIDs(body)
	if err != nil {
		return
	}
	heartbeat := time.Duration(min(h.arg, uint64(maxHeartbeat)))
	var missing []uint64
	s.mu.Lock()
	defer s.mu.Unlock() // held while the pong goes out: see finish
	for _, id := range ids {
		if c := s.calls[callKey{inbox, id}]; c != nil {
			c.watchdog.Reset(3 * max(heartbeat, minHeartbeat))
		} else {
			missing = append(missing, id)
		}
	}
	_ = s.nc.Publish(inbox, appendIDs(appendHeader(nil, kindPong, h.id, uint64(s.free())), missing))
}
