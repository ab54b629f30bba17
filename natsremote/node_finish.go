package natsremote

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"reflect"

	"github.com/offloadgo/offload/internal/codec"
	"github.com/offloadgo/offload/internal/outcome"
	"github.com/offloadgo/offload/internal/shmbuf"
	"github.com/offloadgo/offload/pool"
)

// finish waits for a call's task and answers its submitter. The answer
// goes out under nodeServer.mu, with the call taken out of the books: a
// ping answered after it (which also holds the lock) then says the node
// no longer has the call, and the pong reaches the submitter after the
// answer. A call its submitter cancelled gets a bare "ended", which
// nobody waits for: every call is answered exactly once, so that a node
// allowed one answer per request (NodePermissions) uses it up and the
// server forgets the reply subject at once, not when its window ends.
func (s *nodeServer) finish(c *nodeCall, wait func() (any, error)) {
	defer s.running.Done()
	out, err := wait()
	msg := s.finalAnswer(c, out, err)
	s.mu.Lock()
	delete(s.calls, c.token)
	c.watchdog.Stop()
	if c.quiet {
		msg = kindOf(append(msg[:headerLen], causeCode(context.Cause(c.ctx))), answerKind(outcome.Ended))
	}
	putHeader(msg, header{kind: msg[1], id: c.id, arg: uint64(s.saying(s.free(), false)), token: c.token})
	_ = s.nc.Publish(c.reply, msg)
	c.answeredEarly = !c.quiet && !c.freed
	s.mu.Unlock()
	c.end(nil)
}

// finalAnswer is the answer to a call whose task ended with out and err:
// the header (its kind set; the rest left for finish) and body. The
// output's Buffers are copied into it and released.
func (s *nodeServer) finalAnswer(c *nodeCall, out any, err error) []byte {
	msg := appendHeader(nil, header{})
	switch {
	case err == nil && c.program:
		return s.programOutput(msg, out)
	case err == nil:
		return s.output(msg, out)
	}
	o := s.failed(c, err)
	return kindOf(append(msg, o.Body...), answerKind(o.Kind))
}

// failed is the outcome of a call whose task ended with err, as the
// node's pool reports it. A body that would not fit the connection's
// maximum payload is cut to fit: an error's text, a panic's value and
// stack.
func (s *nodeServer) failed(c *nodeCall, err error) outcome.Outcome {
	var pe *pool.PanicError
	var re *pool.RemoteError
	switch {
	case c.ctx.Err() != nil:
		// Ended by its deadline here, or by the watchdog, or cancelled:
		// then nobody listens.
		return outcome.Of(outcome.Ended, []byte{causeCode(context.Cause(c.ctx))})
	case errors.As(err, &pe):
		return outcome.Of(outcome.Panic, s.fitPanic(pe))
	case errors.As(err, &re) && re.Type != "":
		return outcome.Of(outcome.Raised, s.fitRaised(re)) // a program's exception
	case errors.As(err, &re) && re.Permanent():
		return outcome.Of(outcome.Permanent, s.fit([]byte(re.Message)))
	case errors.As(err, &re):
		return outcome.Of(outcome.Error, s.fit([]byte(re.Message)))
	case c.program && errors.Is(err, pool.ErrUnknownTask):
		// The program did not serve it after all (its hello changed, or
		// it answered "unknown"): nothing ran.
		return outcome.Of(outcome.Unknown, s.fit(fmt.Appendf(nil, "node %s: %v", s.id, err)))
	}
	o := outcome.OfError(err)
	if o.Kind == outcome.Lost {
		o.Body = fmt.Appendf(nil, "node %s shut down under the task", s.id)
	}
	// A NotStarted never ran: the submitter may send the call to
	// another node.
	o.Body = s.fit(o.Body)
	return o
}

// kindOf sets msg's kind.
func kindOf(msg []byte, kind byte) []byte {
	msg[1] = kind
	return msg
}

// output encodes a task's output after msg's header, copying the Buffers
// in it, which are released then: the caller gets copies.
func (s *nodeServer) output(msg []byte, out any) []byte {
	buf := bytes.NewBuffer(msg)
	var err error
	if out != nil && shmbuf.CanHold(reflect.TypeOf(out)) {
		_, err = codec.PeerEncodeInto(buf, shmbuf.CopyPeer{}, out)
		shmbuf.ReleaseAll(out)
	} else {
		err = codec.MarshalInto(buf, out)
	}
	if err != nil {
		return kindOf(append(msg[:headerLen], s.fit(fmt.Appendf(nil, "pool: encode output: %v", err))...), answerKind(outcome.Error))
	}
	if limit := s.nc.MaxPayload(); int64(buf.Len()) > limit {
		return kindOf(fmt.Appendf(msg[:headerLen], "output is %d bytes with its header, over the NATS connection's maximum payload %d", buf.Len(), limit), answerKind(outcome.TooLarge))
	}
	return kindOf(buf.Bytes(), answerKind(outcome.Result))
}

// truncated ends a text cut to fit a message.
const truncated = " [truncated to fit the NATS maximum payload]"

// bodyLimit is the most an answer's body may hold.
func (s *nodeServer) bodyLimit() int { return int(s.nc.MaxPayload()) - headerLen }

// fit cuts text to fit an answer's body, saying so.
func (s *nodeServer) fit(text []byte) []byte {
	return cut(text, s.bodyLimit())
}

func cut(text []byte, limit int) []byte {
	if len(text) <= limit {
		return text
	}
	return append(text[:max(limit-len(truncated), 0):max(limit-len(truncated), 0)], truncated[:min(len(truncated), limit)]...)
}

// fitPanic encodes a panic's value and stack for an answer, cutting the
// stack, then the value (as its text), to fit.
func (s *nodeServer) fitPanic(pe *pool.PanicError) []byte {
	body := codec.EncodePanic(pe.Value, pe.Stack)
	limit := s.bodyLimit()
	if len(body) <= limit {
		return body
	}
	value := cut(fmt.Append(nil, pe.Value), limit/2)
	stack := cut(pe.Stack, limit/2-64) // room for the encoding's own bytes
	return codec.EncodePanic(string(value), stack)
}
