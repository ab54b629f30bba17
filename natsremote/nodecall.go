package natsremote

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"reflect"

	"github.com/offloadgo/offload/internal/codec"
	"github.com/offloadgo/offload/internal/xfer"
	"github.com/offloadgo/offload/pool"
)

// finish waits for a call's task and answers its submitter, unless the
// submitter cancelled it. The answer goes out under server.mu, with the
// call taken out of the books: a ping answered after it (which also holds
// server.mu) then says the node no longer has the call, and the pong
// reaches the submitter after the answer.
func (s *server) finish(c *serverCall, wait func() (any, error)) {
	defer s.running.Done()
	out, err := wait()
	msg := s.outcome(c, out, err)
	s.mu.Lock()
	delete(s.calls, c.key)
	c.watchdog.Stop()
	if !c.quiet {
		putHeader(msg, msg[1], c.key.id, uint64(s.free()))
		_ = s.nc.Publish(c.key.inbox, msg)
	}
	advertise := s.turnedAway
	s.mu.Unlock()
	c.end(nil)
	if advertise {
		s.advertise() // a slot is free, and submitters may wait for one
	}
}

// outcome is the answer to a call whose task ended with out and err: the
// header (its kind set; its ID and free slots left for finish) and body.
// The output's Buffers are copied into it and released.
func (s *server) outcome(c *serverCall, out any, err error) []byte {
	msg := appendHeader(nil, 0, 0, 0)
	var pe *pool.PanicError
	var re *pool.RemoteError
	switch {
	case err == nil:
		return s.output(msg, out)
	case c.ctx.Err() != nil:
		// Ended by its deadline here, or by the watchdog, or cancelled:
		// then nobody listens.
		return kindOf(append(msg, causeCode(context.Cause(c.ctx))), kindEnded)
	case errors.As(err, &pe):
		return kindOf(append(msg, codec.EncodePanic(pe.Value, pe.Stack)...), kindPanic)
	case errors.As(err, &re):
		return kindOf(append(msg, re.Message...), kindError)
	case errors.Is(err, pool.ErrGoexit):
		return kindOf(msg, kindGoexit)
	case errors.Is(err, pool.ErrPayloadTooLarge):
		return kindOf(append(msg, err.Error()...), kindTooLarge)
	case errors.Is(err, pool.ErrWorkerCrashed):
		return kindOf(append(msg, err.Error()...), kindCrashed)
	case errors.Is(err, pool.ErrClosed):
		return kindOf(fmt.Appendf(msg, "node %s shut down under the task", s.id), kindLost)
	}
	return kindOf(append(msg, err.Error()...), kindError)
}

// kindOf sets msg's kind.
func kindOf(msg []byte, kind byte) []byte {
	msg[1] = kind
	return msg
}

// output encodes a task's output after msg's header, copying the Buffers
// in it, which are released then: the caller gets copies.
func (s *server) output(msg []byte, out any) []byte {
	buf := bytes.NewBuffer(msg)
	var err error
	if out != nil && xfer.CanHold(reflect.TypeOf(out)) {
		_, err = codec.PeerEncodeInto(buf, xfer.CopyPeer, out)
		xfer.ReleaseAll(out)
	} else {
		err = codec.MarshalInto(buf, out)
	}
	if err != nil {
		return kindOf(fmt.Appendf(msg[:headerLen], "pool: encode output: %v", err), kindError)
	}
	if limit := s.nc.MaxPayload(); int64(buf.Len()) > limit {
		return kindOf(fmt.Appendf(msg[:headerLen], "output is %d bytes with its header, over the NATS connection's maximum payload %d", buf.Len(), limit), kindTooLarge)
	}
	return kindOf(buf.Bytes(), kindResult)
}
