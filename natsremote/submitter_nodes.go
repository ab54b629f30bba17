package natsremote

import (
	"time"

	"github.com/nats-io/nats.go"

	"github.com/offloadgo/offload/internal/seam"
)

// knownNode is a submitter's view of one worker node. An advert (which
// anyone allowed on the advert subject could forge) only makes a node
// known: the submitter pings it on its own subject, and the node becomes
// verified, and gets calls, once it answers with the ping's nonce. From
// then on only its pongs and its answers to calls, which carry what only
// it received, prove it alive and tell its figures. Guarded by
// submitter.mu.
type knownNode struct {
	id      string
	key     uint64 // the submitter's number for it: pings carry it, pongs echo it
	subject string
	group   *nameGroup // the nodes of its name
	inGroup int        // its index in group.nodes

	verified bool // it answered a ping: see above
	status        // as it last said in a pong or an answer
	// reports counts its pongs and answers, so that a call it turned away
	// waits for a fresh word from it before trying it again.
	reports  uint64
	heardAt  time.Time // its last pong or answer
	advertAt time.Time // its last advert: a hint, never proof of life
	// saysLeaving is its last advert's word that it leaves: a hint too,
	// which names how a node that then stops answering went (see
	// onNoResponders), never whether it did.
	saysLeaving bool
	pingedAt    time.Time
	probeDue    bool // a ping for an advert's news is due: see probe
	// nonce is its latest ping's, prevNonce the one before: a pong must
	// echo one of them, on that ping's reply subject, with its secret.
	nonce, prevNonce         uint64
	pingReply, prevPingReply secret
	// unreachableAt is when NATS first said nobody subscribes to its
	// subject (a "no responders" status), since its last pong; zero if not.
	unreachableAt time.Time
	// watchedAt is when its first call of a busy spell was sent: its
	// silence counts from then at the earliest.
	watchedAt time.Time
	// sentSince counts the calls sent to it since its last report, which
	// did not see them: its free slots are free - sentSince.
	sentSince int
	// window caps the calls sent to it per report: none (maxSlots) until
	// it answers "full", then one, and one more for each call it takes
	// that was sent after its latest "full" (fullID): see turnedAway.
	window int
	fullID uint64
	calls  map[uint64]*pending // this pool's, by call ID
	// refused holds the tasks the node said it lacks (or has in another
	// version): they don't go there again.
	refused map[string]bool
}

// Bounds of a submitter's node table, against forged adverts: how many
// nodes it knows, and how many more it is still waiting to hear from
// (Options.MaxNodesPerName bounds those of one name).
const (
	maxNodes   = 1024
	maxProbing = 64
)

// silence is how long n has been silent at now, as far as its calls are
// concerned: since it last spoke, or since its first call was sent.
func (n *knownNode) silence(now time.Time) time.Duration {
	if n.watchedAt.After(n.heardAt) {
		return now.Sub(n.watchedAt)
	}
	return now.Sub(n.heardAt)
}

// lossAt is when n will be lost if it says nothing more: the latest a
// call sent to it now may start there (callHead.startBy).
func (n *knownNode) lossAt(heartbeat time.Duration) time.Time {
	from := n.heardAt
	if n.watchedAt.After(from) {
		from = n.watchedAt
	}
	return from.Add(lossAfter(heartbeat))
}

// room is how many calls the node would take now, by our reckoning: its
// free slots less the calls sent since, and no more than its window
// allows.
func (n *knownNode) room() int { return min(n.free, n.window) - n.sentSince }

// freeLeft is what the node last said of its free slots less the calls
// sent since: what its adverts should agree with.
func (n *knownNode) freeLeft() int { return n.free - n.sentSince }

// report records what the node just said of itself, in a pong or an
// answer: it is alive, and has free slots.
func (n *knownNode) report(free int, now time.Time) {
	n.free, n.sentSince, n.heardAt = free, 0, now
	n.reports++
	n.unreachableAt = time.Time{}
}

// turnedAway records that n answered call id "full" though we counted
// room for it: its figures are not to be trusted for more than a call at
// a time. Until it takes a call sent after this one, it is sent at most
// one call per report, so a node that re-advertises room after each
// "full" draws one re-send per report, not one from every waiting call.
func (n *knownNode) turnedAway(id uint64) {
	n.window, n.fullID = 1, max(n.fullID, id)
}

// took records that n took p (it answered it other than "full", "late" or
// "unknown", or a pong said it has it): each call sent after its latest
// "full" opens its window by one more call per report (as TCP's slow
// start does), so an honest node's window is back to its slots within a
// few reports.
func (n *knownNode) took(p *pending) {
	if !p.taken && p.id > n.fullID {
		p.taken = true
		n.window = min(n.window+1, maxSlots)
	}
}

// usable reports whether n is fit for a new call at now.
func (s *submitter) usable(n *knownNode, now time.Time) bool {
	return n.verified && !n.leaving && n.unreachableAt.IsZero() && now.Sub(n.heardAt) < lossAfter(s.o.Heartbeat)
}

// onAdvert takes a node's advert: a node it does not know yet is pinged,
// and so is one whose advert disagrees with what it last said (a slot
// freed, it leaves); the pong tells.
func (s *submitter) onAdvert(msg *nats.Msg) {
	a, err := parseAdvert(msg.Data)
	if err != nil {
		s.ignore(ignoredBad)
		return
	}
	now := time.Now()
	var p ping
	s.mu.Lock()
	n := s.nodes[a.id()]
	switch {
	case n == nil && a.leaving:
	case n == nil && s.probing >= maxProbing:
		s.ignore(ignoredFull)
	case n == nil && s.names[a.name] != nil && s.names[a.name].full(s.o.MaxNodesPerName):
		s.ignore(ignoredNameFull)
	case n == nil:
		s.lastID++
		n = &knownNode{id: a.id(), key: s.lastID, subject: nodeSubject(s.o.Pool, a.name, a.suffix), advertAt: now,
			window: maxSlots, calls: map[uint64]*pending{}}
		s.enter(n, a.name)
		s.probing++
		p = s.ping(n, now)
	default:
		n.advertAt, n.saysLeaving = now, a.leaving
		if a.leaving != n.leaving || a.free != n.freeLeft() || !n.unreachableAt.IsZero() {
			p = s.probe(n, now)
		}
	}
	s.mu.Unlock()
	p.send(s)
}

// probeGap is the least time between two pings to a node that adverts
// call for: a flood of adverts draws at most one ping per gap.
func (s *submitter) probeGap() time.Duration {
	return min(max(s.o.Heartbeat/8, minHeartbeat/2), 50*time.Millisecond)
}

// probe pings n now, for news in an advert, or at the end of the gap since
// its last ping if that is later: the adverts that come meanwhile are
// answered by that one ping. s.mu is held.
func (s *submitter) probe(n *knownNode, now time.Time) ping {
	wait := s.probeGap() - now.Sub(n.pingedAt)
	if wait <= 0 {
		return s.ping(n, now)
	}
	if !n.probeDue {
		n.probeDue = true
		time.AfterFunc(wait, func() {
			var p ping
			s.mu.Lock()
			n.probeDue = false
			if s.nodes[n.id] == n {
				p = s.ping(n, time.Now())
			}
			s.mu.Unlock()
			p.send(s)
		})
	}
	return ping{}
}

// verify makes n a live node, on its first pong, if its name and the
// table have room for it (see makeRoom); if not, n leaves the table,
// unheard of, and may try again with its next advert. s.mu is held.
func (s *submitter) verify(n *knownNode) bool {
	switch {
	case n.group.full(s.o.MaxNodesPerName):
		s.ignore(ignoredNameFull) // others of its name answered first
	case !s.makeRoom(n):
		s.ignore(ignoredFull)
	default:
		n.verified = true
		n.group.verified++
		s.probing--
		s.event(seam.Event{Kind: seam.NodeJoined, Node: n.id})
		return true
	}
	s.drop(n, 0, nil)
	return false
}

// drop takes n out of the table, reporting why: NodeLeft for a node that
// said it leaves (or was evicted, err saying so), NodeLost (with err
// saying how) for one lost or gone. A node never verified leaves without
// a word. s.mu is held.
func (s *submitter) drop(n *knownNode, why seam.EventKind, err error) {
	if s.nodes[n.id] != n {
		return // dropped already
	}
	s.exit(n)
	if !n.verified {
		s.probing--
		return
	}
	s.event(seam.Event{Kind: why, Node: n.id, Err: err})
}

// event reports ev to the pool (which logs it and calls its hook) from the
// outbox, outside the lock. s.mu may be held.
func (s *submitter) event(ev seam.Event) {
	s.post(func() { s.env.Events.Event(ev) })
}

// post runs f outside the lock, after what was posted before (see
// outbox). s.mu may be held.
func (s *submitter) post(f func()) { s.out.post(f) }

// wake tells the runners waiting for room that there may be some. s.mu
// is held.
func (s *submitter) wake() {
	if s.waiting > 0 {
		close(s.changed)
		s.changed = make(chan struct{})
	}
}

// countSlots brings Slots up to date: the slots of the usable nodes;
// -1 while none is and the pool is new (its nodes may not have answered
// yet). When they grew, the pool hears of it, for the callers waiting
// for room: no freed slot would tell it. s.mu is held.
func (s *submitter) countSlots(now time.Time) {
	slots := 0
	for _, n := range s.nodes {
		if s.usable(n, now) {
			slots += n.workers
		}
	}
	if slots == 0 && !s.allSeen {
		slots = -1
	}
	if old := s.slots.Swap(int64(slots)); int64(slots) > max(old, 0) {
		s.post(s.env.Events.MoreSlots)
	}
}
