package natsremote

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/offloadgo/offload/internal/transport"
)

// node is a submitter's view of one worker node, from its adverts and
// answers, and its calls there. Guarded by submitter.mu.
type node struct {
	id      string
	key     uint64 // the submitter's number for it: pings carry it, pongs echo it
	subject string

	workers, busy, free int
	heartbeat           time.Duration // between its adverts
	advertAt            time.Time     // its last advert
	heardAt             time.Time     // anything from it
	pingedAt            time.Time
	// watchedAt is when its first call of a busy spell was sent: its
	// silence counts from then at the earliest.
	watchedAt time.Time
	// sentSince counts the calls sent to it since its last report, which
	// did not see them: its free slots are free - sentSince.
	sentSince int
	leaving   bool
	calls     map[uint64]*pending // this pool's, by call ID
	// refused holds the tasks the node said it lacks (or has in another
	// version): they don't go there again.
	refused map[string]bool
}

// silence is how long n has been silent at now, as far as its calls are
// concerned: since it last spoke, or since its first call was sent.
func (n *node) silence(now time.Time) time.Duration {
	if n.watchedAt.After(n.heardAt) {
		return now.Sub(n.watchedAt)
	}
	return now.Sub(n.heardAt)
}

// room is how many calls the node would take now, by our reckoning.
func (n *node) room() int { return n.free - n.sentSince }

// report records the node's free slots as it just told them (in an
// advert, an answer or a pong).
func (n *node) report(free int, now time.Time) {
	n.free, n.sentSince, n.heardAt = free, 0, now
}

// onAdvert takes a node's advert: a node joins, updates its figures, or
// leaves.
func (s *submitter) onAdvert(msg *nats.Msg) {
	a, err := parseAdvert(msg.Data)
	if err != nil {
		s.env.Logger.Warn("natsremote: ignoring a bad advert", "pool", s.o.Pool, "err", err)
		return
	}
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.nodes[a.id]
	if n == nil {
		if a.leaving {
			return
		}
		s.lastID++
		n = &node{id: a.id, key: s.lastID, subject: nodeSubject(s.o.Pool, a.id), calls: map[uint64]*pending{}}
		s.nodes[a.id] = n
		s.env.Logger.Info("natsremote: node joined", "pool", s.o.Pool, "node", a.id, "workers", a.workers)
		s.env.Events.Event(transport.Event{Kind: transport.Started, Node: a.id})
	}
	n.workers, n.busy, n.heartbeat, n.leaving, n.advertAt = a.workers, a.busy, a.heartbeat, a.leaving, now
	n.report(a.free, now)
	if n.leaving && len(n.calls) == 0 {
		s.drop(n, transport.Retired)
	}
	s.wake()
}

// drop takes n out of the table, reporting why. s.mu is held.
func (s *submitter) drop(n *node, why transport.EventKind) {
	delete(s.nodes, n.id)
	if why == transport.Retired {
		s.env.Logger.Info("natsremote: node left", "pool", s.o.Pool, "node", n.id)
	}
	s.env.Events.Event(transport.Event{Kind: why, Node: n.id})
}

// wake tells the runners waiting for room that there may be some. s.mu
// is held.
func (s *submitter) wake() {
	if s.waiting > 0 {
		close(s.changed)
		s.changed = make(chan struct{})
	}
}

// live reports whether n is fit for a new call: heard from lately, and
// not leaving.
func (s *submitter) live(n *node, now time.Time) bool {
	return !n.leaving && now.Sub(n.heardAt) < lossAfter(max(n.heartbeat, s.o.Heartbeat))
}

// errNoNode is pick's error when every live node refused the task.
var errNoNode = errors.New("no live node serves it")

// pick finds a node with room for a call of task, by two random choices
// among those that have some (the one with more room wins), and makes p
// its next call there. With no room anywhere it waits for some, until
// ctx ends (returning ctx's cause) or, if until is not zero, until then
// (errNoRoom); if every live node has refused the task, it fails with
// ErrUnknownTask.
func (s *submitter) pick(ctx context.Context, task string, p *pending, until time.Time) error {
	for {
		if s.nc.IsClosed() {
			return errConnClosed
		}
		now := time.Now()
		s.mu.Lock()
		var a, b *node
		seen, refused, roomy := 0, 0, 0
		for _, n := range s.nodes {
			if !s.live(n, now) {
				continue
			}
			if seen++; n.refused[task] {
				refused++
				continue
			}
			if n.room() <= 0 {
				continue
			}
			// Two distinct nodes with room, drawn uniformly (reservoir
			// sampling keeps this one pass, without a slice).
			switch roomy++; {
			case a == nil:
				a = n
			case b == nil:
				b = n
			case rand.IntN(roomy) < 2:
				if rand.IntN(2) == 0 {
					a = n
				} else {
					b = n
				}
			}
		}
		if b != nil && b.room() > a.room() || b != nil && b.room() == a.room() && rand.IntN(2) == 0 {
			a = b
		}
		if a != nil {
			s.register(a, p, now)
			s.mu.Unlock()
			return nil
		}
		if seen > 0 && refused == seen {
			s.mu.Unlock()
			return fmt.Errorf("%w: %q: %s", transport.ErrUnknownTask, task, errNoNode)
		}
		look := s.o.Heartbeat // look again: nodes may have gone quiet
		if !until.IsZero() {
			if look = min(look, until.Sub(now)); look <= 0 {
				s.mu.Unlock()
				return errNoRoom
			}
		}
		s.waiting++
		changed := s.changed
		s.mu.Unlock()
		timer := time.NewTimer(look)
		select {
		case <-changed:
		case <-timer.C:
		case <-ctx.Done():
		}
		timer.Stop()
		s.mu.Lock()
		s.waiting--
		s.mu.Unlock()
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
	}
}

var errConnClosed = errors.New("natsremote: the NATS connection is closed")

// errNoRoom is pick giving up at its until: no node had a free slot.
var errNoRoom = errors.New("natsremote: no node had a free slot")

// Nodes lists the nodes the pool knows, by ID (see pool.Pool.Nodes).
func (s *submitter) Nodes() []transport.NodeStats {
	now := time.Now()
	s.mu.Lock()
	out := make([]transport.NodeStats, 0, len(s.nodes))
	for _, n := range s.nodes {
		out = append(out, transport.NodeStats{
			ID: n.id, Workers: n.workers, Busy: n.busy, Free: n.free,
			InFlight: len(n.calls), AdvertAge: now.Sub(n.advertAt),
		})
	}
	s.mu.Unlock()
	slices.SortFunc(out, func(a, b transport.NodeStats) int { return strings.Compare(a.ID, b.ID) })
	return out
}
