package natsremote

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/offloadgo/offload/internal/seam"
)

// pending is one call sent (or about to be) to a node, waiting for its
// answer. A runner reuses one for all its calls, under a new ID and token
// each time. Its fields but answer are guarded by submitter.mu.
type pending struct {
	id    uint64
	token uint64 // only the node it was sent to has it: its answer must too
	reply secret // of its reply subject: see submitter_replies.go
	node  *knownNode
	// startBy is the latest the node may start it: when the node would be
	// lost if it said nothing more after the call was sent.
	startBy time.Time
	// listed says the call was published, so pings may list it: a ping
	// must never reach the node before the call it lists.
	listed bool
	// fullAt holds, for each node that turned this call away as full, its
	// report count then: the call does not go back there until the node
	// has reported again.
	fullAt map[uint64]uint64
	// notStarted holds the keys of the nodes whose worker process did not
	// start for this call: it does not go back to them (see pick).
	notStarted []uint64
	// taken: its node has shown it took it (see knownNode.took).
	taken bool
	// inPing is the nonce of the latest ping that listed it: a pong that
	// echoes it and does not call it missing says the node has it.
	inPing uint64
	// answer gets the call's one answer; it is sent under submitter.mu
	// by whoever takes the call out of the books, so it never blocks.
	answer chan answer
}

// answer is a node's answer to a call, or lost: the node went silent, or
// said it no longer has the call; or undelivered: NATS had no one to
// deliver the call to, so it never ran.
type answer struct {
	kind        byte
	body        []byte
	lost        error
	undelivered bool
}

// register makes p a call to n under a new ID and token, at now. s.mu is
// held.
func (s *submitter) register(n *knownNode, p *pending, now time.Time) {
	if len(n.calls) == 0 {
		n.watchedAt = now
	}
	s.lastID++
	p.id, p.token, p.reply, p.node, p.listed, p.taken, p.inPing = s.lastID, s.token(), s.secret(), n, false, false, 0
	p.startBy = n.lossAt(s.o.Heartbeat)
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

// deliver takes p out of the books and gives it answer a, unless it is out
// already (answered, lost, or forgotten). s.mu is held.
func (s *submitter) deliver(p *pending, a answer) bool {
	if s.calls[p.id] != p {
		return false
	}
	delete(s.calls, p.id)
	delete(p.node.calls, p.id)
	p.answer <- a
	if p.node.leaving && len(p.node.calls) == 0 && s.nodes[p.node.id] == p.node {
		s.drop(p.node, seam.NodeLeft, nil)
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
		s.wake() // the slot it was counted against may be free
	}
	s.mu.Unlock()
	select {
	case <-p.answer:
	default:
	}
}

// abandon ends p, whose caller gave up: the node is told to cancel it
// (for a Subprocess node: its grace, then the kill) and the pool is told
// a task was canceled on its node. The node's answer, if any, is dropped.
func (s *submitter) abandon(p *pending, ctx context.Context) {
	s.mu.Lock()
	subject, id, token, node := p.node.subject, p.id, p.token, p.node.id
	s.mu.Unlock()
	s.forget(p)
	_ = s.nc.Publish(subject, appendHeader(nil, header{kind: kindCancel, id: id, arg: uint64(causeCode(context.Cause(ctx))), token: token}))
	s.event(seam.Event{Kind: seam.NodeTaskCanceled, Node: node})
}

// onReply takes a message on the pool's inbox: a node's answer to a call,
// its pong, or NATS's word that nobody took what was sent. Each counts
// only on the reply subject of the call or ping it is about, with its
// secret: see submitter_replies.go.
func (s *submitter) onReply(msg *nats.Msg) {
	r, ok := parseReply(s.inbox, msg.Subject)
	if !ok {
		s.ignore(ignoredForged)
		return
	}
	if len(msg.Data) == 0 && msg.Header.Get("Status") == "503" {
		s.onNoResponders(r)
		return
	}
	h, body, err := parseHeader(msg.Data)
	switch {
	case err != nil:
		s.ignore(ignoredBad)
	case h.kind == kindPong && r.kind == replyPing:
		s.onPong(r, h, body)
	case h.kind != kindPong && r.kind == replyCall:
		s.onAnswer(r, h, body)
	default:
		s.ignore(ignoredForged)
	}
}

// onAnswer gives a call its answer, if it came on the call's reply
// subject and carries its ID and token: from the node the call was sent
// to, about that call.
func (s *submitter) onAnswer(r reply, h header, body []byte) {
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.calls[r.num]
	switch {
	case p == nil:
		s.dropped.Add(1) // too late: the call was given up on
		return
	case p.reply != r.secret || p.token != h.token || p.id != h.id:
		s.ignore(ignoredForged)
		return
	}
	free := int(min(h.arg, maxSlots))
	if h.kind == kindFull {
		free = 0 // whatever else it says: it just had no room
	}
	wasUnreachable := !p.node.unreachableAt.IsZero()
	p.node.report(free, now)
	switch h.kind {
	case kindFull:
		p.fullAt[p.node.key] = p.node.reports
		p.node.turnedAway(p.id)
	case kindNotStarted:
		p.notStarted = append(p.notStarted, p.node.key)
	case kindLate, kindUnknown:
	default:
		p.node.took(p)
	}
	s.deliver(p, answer{kind: h.kind, body: body})
	if wasUnreachable {
		s.countSlots(now) // it is usable again; otherwise an answer changes no node's slots
	}
	s.wake()
}

// onPong takes a node's answer to a ping, if it came on the reply subject
// of one of its last two pings and echoes that ping's nonce: the node is
// alive, verified if it was not yet, and the calls it says it does not
// have are lost — their answers, which it would have sent before this
// pong, never came.
func (s *submitter) onPong(r reply, h header, body []byte) {
	st, rest, err := parseStatus(h.arg, body)
	var missing []uint64
	if err == nil {
		missing, err = parseIDs(rest)
	}
	if err != nil {
		s.ignore(ignoredBad)
		return
	}
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.byKey[r.num]
	var nonce uint64
	if n != nil {
		nonce, _ = n.pingNonce(r.secret)
	}
	if n == nil || h.id != n.key || nonce == 0 || h.token != nonce {
		s.ignore(ignoredForged)
		return
	}
	if !n.verified && !s.verify(n) {
		return
	}
	n.status = st
	n.report(st.free, now)
	for _, id := range missing {
		if p := n.calls[id]; p != nil && p.listed {
			s.deliver(p, answer{lost: fmt.Errorf("%w: node %s no longer has the call", seam.ErrNodeLost, n.id)})
		}
	}
	for _, p := range n.calls {
		if p.inPing == h.token {
			n.took(p) // the node has it: the ping listed it, and the pong did not call it missing
		}
	}
	if n.leaving && len(n.calls) == 0 && s.nodes[n.id] == n {
		s.drop(n, seam.NodeLeft, nil)
	}
	s.countSlots(now)
	s.wake()
}

// onNoResponders takes NATS's word that nobody subscribes to a node's
// subject any more, on the reply subject of the call or ping that found
// no one there. A call never reached the node, so it never ran and may go
// elsewhere; the node is unreachable, which the watcher turns into a loss
// if it lasts (see check).
//
// The word counts only on the reply subject of a call or ping in flight,
// with its secret: only the server and the node it was sent to know that
// subject. The server says it only if the call never reached the node.
// The node itself can say it of a call it has (a client may publish any
// header), which makes the call go elsewhere: no more than the node can do
// by answering "full", and a node is trusted with the calls it is sent
// (see NodePermissions). Said of a ping, it makes that node, and no
// other, unreachable.
func (s *submitter) onNoResponders(r reply) {
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	var n *knownNode
	switch r.kind {
	case replyCall:
		p := s.calls[r.num]
		if p == nil {
			return // the call is over
		}
		if p.reply != r.secret {
			s.ignore(ignoredForged)
			return
		}
		n = p.node
		s.deliver(p, answer{undelivered: true})
	case replyPing:
		if n = s.byKey[r.num]; n == nil {
			return // the node is gone
		}
		if _, ok := n.pingNonce(r.secret); !ok {
			s.ignore(ignoredForged)
			return
		}
	}
	if s.nodes[n.id] != n {
		return
	}
	if !n.verified || len(n.calls) == 0 {
		// Nothing of ours there: forget it now. A node that said it leaves
		// and runs none of our calls may stop answering before a ping
		// confirms it: it left. Only the server can say nobody subscribes,
		// so a forged advert can't make a live node go this way.
		if n.leaving || n.saysLeaving {
			s.drop(n, seam.NodeLeft, nil)
		} else {
			s.drop(n, seam.NodeLost, errGone)
		}
	} else if n.unreachableAt.IsZero() {
		n.unreachableAt = now
	}
	s.countSlots(now)
	s.wake()
}

// errGone is why a node nobody subscribes for any more was dropped.
var errGone = errors.New("gone: nobody subscribes to its subject")

// ping is a ping to send once the lock is released.
type ping struct {
	subject, reply string
	data           []byte
}

// ping makes n's next ping, with a fresh nonce, listing the calls it
// has of ours that were published. s.mu is held.
func (s *submitter) ping(n *knownNode, now time.Time) ping {
	n.prevNonce, n.nonce = n.nonce, s.token()
	n.prevPingReply, n.pingReply = n.pingReply, s.secret()
	n.pingedAt = now
	listed := make([]listedCall, 0, len(n.calls))
	for id, p := range n.calls {
		if p.listed {
			listed = append(listed, listedCall{id, p.token})
			p.inPing = n.nonce
		}
	}
	data := appendHeader(make([]byte, 0, headerLen+16*len(listed)), header{kind: kindPing, id: n.key, arg: uint64(s.o.Heartbeat), token: n.nonce})
	return ping{subject: n.subject, reply: s.replyToPing(n), data: appendListed(data, listed)}
}

// send publishes the ping, if there is one.
func (p ping) send(s *submitter) {
	if p.data != nil {
		_ = s.nc.PublishRequest(p.subject, p.reply, p.data)
	}
}
