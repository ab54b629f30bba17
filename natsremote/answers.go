package natsremote

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/offloadgo/offload/internal/transport"
)

// pending is one call sent (or about to be) to a node, waiting for its
// answer. A runner reuses one for all its calls, under a new ID each
// time. Its fields but answer are guarded by submitter.mu.
type pending struct {
	id   uint64
	node *node
	// listed says the call was published, so pings may list it: a ping
	// must never reach the node before the call it lists.
	listed bool
	// answer gets the call's one answer; it is sent under submitter.mu
	// by whoever takes the call out of the books, so it never blocks.
	answer chan answer
}

// answer is a node's answer to a call, or lost: the node went silent, or
// said it no longer has the call.
type answer struct {
	kind byte
	body []byte
	lost error
}

// register makes p a call to n under a new ID, at now. s.mu is held.
func (s *submitter) register(n *node, p *pending, now time.Time) {
	if len(n.calls) == 0 {
		n.watchedAt = now
	}
	s.lastID++
	p.id, p.node, p.listed = s.lastID, n, false
	s.calls[p.id] = p
	n.calls[p.id] = p
	n.sentSince++
}

// list records that p was published.
func (s *submitter) list(p *pending) {
	s.mu.Lock()
	p.listed = true
	s.mu.Unlock()
}

// settle takes p out of the books and gives it answer a, unless it is out
// already (answered, lost, or forgotten). s.mu is held.
func (s *submitter) settle(p *pending, a answer) bool {
	if s.calls[p.id] != p {
		return false
	}
	delete(s.calls, p.id)
	delete(p.node.calls, p.id)
	p.answer <- a
	if p.node.leaving && len(p.node.calls) == 0 && s.nodes[p.node.id] == p.node {
		s.drop(p.node, transport.Retired)
	}
	return true
}

// forget takes p out of the books without an answer (its caller gave up,
// or it could not be sent) and empties its channel for its next use.
func (s *submitter) forget(p *pending) {
	s.mu.Lock()
	if s.calls[p.id] == p {
		delete(s.calls, p.id)
		delete(p.node.calls, p.id)
		p.node.sentSince = max(p.node.sentSince-1, 0)
	}
	s.mu.Unlock()
	select {
	case <-p.answer:
	default:
	}
}

// abandon ends p, whose caller gave up: the node is told to cancel it
// (for a Subprocess node: its grace, then the kill) and the pool is told
// a task was terminated. The node's answer, if any, is dropped.
func (s *submitter) abandon(p *pending, ctx context.Context) {
	subject := p.node.subject
	s.forget(p)
	_ = s.nc.PublishRequest(subject, s.inbox, appendHeader(nil, kindCancel, p.id, uint64(causeCode(context.Cause(ctx)))))
	s.env.Events.Event(transport.Event{Kind: transport.Terminated, Node: p.node.id})
}

// onAnswer takes a node's message on the pool's inbox: an answer to a
// call, which goes to its runner, or a pong.
func (s *submitter) onAnswer(msg *nats.Msg) {
	h, body, err := parseHeader(msg.Data)
	if err != nil {
		s.env.Logger.Warn("natsremote: ignoring a bad answer", "pool", s.o.Pool, "err", err)
		return
	}
	if h.kind == kindPong {
		s.onPong(h, body)
		return
	}
	now := time.Now()
	s.mu.Lock()
	p := s.calls[h.id]
	if p == nil {
		s.mu.Unlock()
		s.dropped.Add(1) // too late: the call was given up on
		return
	}
	p.node.report(int(min(h.arg, maxSlots)), now)
	s.settle(p, answer{kind: h.kind, body: body})
	s.wake()
	s.mu.Unlock()
}

// onPong takes a node's answer to a ping: it is alive, and the calls it
// says it does not have are lost — their answers, which it would have
// sent before this pong, never came.
func (s *submitter) onPong(h header, body []byte) {
	missing, err := parseIDs(body)
	if err != nil {
		s.env.Logger.Warn("natsremote: ignoring a bad pong", "pool", s.o.Pool, "err", err)
		return
	}
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, n := range s.nodes {
		if n.key != h.id {
			continue
		}
		n.report(int(min(h.arg, maxSlots)), now)
		s.wake()
		for _, id := range missing {
			if p := n.calls[id]; p != nil && p.listed {
				s.settle(p, answer{lost: fmt.Errorf("%w: node %s no longer has the call", transport.ErrNodeLost, n.id)})
			}
		}
		return
	}
}
