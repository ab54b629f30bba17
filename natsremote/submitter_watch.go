package natsremote

import (
	"fmt"
	"time"

	"github.com/offloadgo/offload/internal/seam"
)

// lossAfter is how long a node may stay silent, for a heartbeat h, before
// it is lost. The watcher looks every h/4, so a node is given up on at
// most 2.75 heartbeats after it last spoke: within the documented 3, while
// a live node, pinged every heartbeat, has 1.5 heartbeats to spare.
func lossAfter(h time.Duration) time.Duration { return h * 5 / 2 }

// watch does the watcher's work every quarter heartbeat, until the pool
// closes.
func (s *submitter) watch() {
	t := time.NewTicker(s.o.Heartbeat / 4)
	defer t.Stop()
	for {
		select {
		case <-t.C:
		case <-s.stopped:
			return
		}
		s.check(time.Now())
	}
}

// check does the watcher's work at time now. Every node is pinged each
// heartbeat (an unreachable one with calls each quarter). A node with
// calls that stayed silent past the loss bound, or unreachable for half a
// heartbeat, is lost and its calls fail with ErrNodeLost; an idle one is
// forgotten; one never verified is dropped when its first ping goes
// unanswered.
func (s *submitter) check(now time.Time) {
	var pings []ping
	s.mu.Lock()
	if !s.allSeen && now.Sub(s.boundAt) >= s.o.Heartbeat {
		s.allSeen = true
	}
	for _, n := range s.nodes {
		silent := n.silence(now)
		switch {
		case !n.verified:
			if now.Sub(n.pingedAt) > lossAfter(s.o.Heartbeat) {
				s.drop(n, seam.NodeLost, nil) // an advert nobody answers for: forged, or gone
			}
			continue
		case len(n.calls) > 0 && silent > lossAfter(s.o.Heartbeat):
			s.lose(n, fmt.Sprintf("silent for %v", silent.Round(time.Millisecond)))
			continue
		case len(n.calls) > 0 && !n.unreachableAt.IsZero() && now.Sub(n.unreachableAt) >= s.o.Heartbeat/2:
			// Twice NATS said nobody is there, a quarter heartbeat apart at
			// least: not a moment's reconnect.
			s.lose(n, errGone.Error())
			continue
		case len(n.calls) == 0 && silent > lossAfter(s.o.Heartbeat):
			s.drop(n, seam.NodeLost, fmt.Errorf("idle, and silent for %v", silent.Round(time.Millisecond)))
			continue
		}
		every := s.o.Heartbeat
		if !n.unreachableAt.IsZero() {
			every /= 4
		}
		if now.Sub(n.pingedAt) >= every {
			pings = append(pings, s.ping(n, now))
		}
	}
	s.countSlots(now) // time alone makes a silent node unusable
	s.wake()
	s.mu.Unlock()
	for _, p := range pings {
		p.send(s)
	}
	s.reportIgnored()
}

// lose gives up on n: its calls fail with ErrNodeLost. It is not told to
// cancel them: it ends them itself once their pings stop, at about the
// same time, and starts none after the bound each carries. s.mu is held.
func (s *submitter) lose(n *knownNode, why string) {
	err := fmt.Errorf("%w: node %s %s", seam.ErrNodeLost, n.id, why)
	s.drop(n, seam.NodeLost, fmt.Errorf("%s, with %d calls in flight", why, len(n.calls))) // first: deliver must not drop it again
	for _, p := range n.calls {
		s.deliver(p, answer{lost: err})
	}
}

// Why a message was ignored: it did not parse; it lacked the token or
// nonce of what it answered (forged, or from another submitter's ping);
// it was an advert (or first pong) of a node the table had no room for,
// or one of a name that holds Options.MaxNodesPerName nodes already.
const (
	ignoredBad = iota
	ignoredForged
	ignoredFull
	ignoredNameFull
	ignoredKinds
)

// ignore counts an ignored message, for reportIgnored. Safe anywhere.
func (s *submitter) ignore(why int) { s.ignored[why].Add(1) }

// reportIgnored logs, at most once per watcher round, how many messages
// were ignored since the last report: a flood of garbage or forgeries is
// one line per round, not one per message.
func (s *submitter) reportIgnored() {
	var counts [ignoredKinds]uint64
	total := uint64(0)
	for i := range counts {
		counts[i] = s.ignored[i].Swap(0)
		total += counts[i]
	}
	if total == 0 {
		return
	}
	s.post(func() {
		s.env.Logger.Warn("natsremote: ignored messages", "pool", s.o.Pool,
			"corrupt", counts[ignoredBad], "forged_or_stale", counts[ignoredForged], "table_full", counts[ignoredFull],
			"name_full", counts[ignoredNameFull])
	})
}
