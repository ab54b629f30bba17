package natsremote

import (
	"fmt"
	"time"

	"github.com/offloadgo/offload/internal/transport"
)

// lossAfter is how long a node may stay silent, for a heartbeat h, before
// it is lost. The watcher looks every h/4, so a node is given up on at
// most 2.75 heartbeats after it last spoke: within the documented 3, while
// a live node, pinged every heartbeat, has 1.5 heartbeats to spare.
func lossAfter(h time.Duration) time.Duration { return h * 5 / 2 }

// watch pings, every heartbeat, the nodes that run the pool's calls, and
// gives up on nodes that went silent, until the pool closes.
func (s *submitter) watch() {
	t := time.NewTicker(s.o.Heartbeat / 4)
	defer t.Stop()
	for {
		select {
		case <-t.C:
		case <-s.env.Stop.Done():
			return
		}
		s.check(time.Now())
	}
}

// ping is a ping to send once the lock is released.
type ping struct {
	subject string
	data    []byte
}

// check does the watcher's work at time now: a node with calls that was
// silent too long is lost, and its calls fail with ErrNodeLost; an idle
// one is forgotten; the others with calls get a ping listing them.
func (s *submitter) check(now time.Time) {
	var pings []ping
	s.mu.Lock()
	for _, n := range s.nodes {
		switch silent := n.silence(now); {
		case len(n.calls) > 0 && silent > lossAfter(s.o.Heartbeat):
			s.lose(n, silent)
		case len(n.calls) == 0 && silent > lossAfter(max(n.heartbeat, s.o.Heartbeat)):
			s.env.Logger.Info("natsremote: idle node gone quiet, forgotten", "pool", s.o.Pool, "node", n.id, "silent", silent)
			s.drop(n, transport.Crashed)
		case len(n.calls) > 0 && now.Sub(n.pingedAt) >= s.o.Heartbeat:
			n.pingedAt = now
			ids := make([]uint64, 0, len(n.calls))
			for id, p := range n.calls {
				if p.listed {
					ids = append(ids, id)
				}
			}
			pings = append(pings, ping{n.subject, appendIDs(appendHeader(nil, kindPing, n.key, uint64(s.o.Heartbeat)), ids)})
		}
	}
	s.mu.Unlock()
	for _, p := range pings {
		_ = s.nc.PublishRequest(p.subject, s.inbox, p.data)
	}
}

// lose gives up on n, silent for too long: its calls fail with
// ErrNodeLost. It is not told to cancel them: it ends them itself once
// their pings stop, at about the same time. s.mu is held.
func (s *submitter) lose(n *node, silent time.Duration) {
	s.env.Logger.Warn("natsremote: node lost", "pool", s.o.Pool, "node", n.id, "silent", silent, "calls", len(n.calls))
	err := fmt.Errorf("%w: node %s silent for %v", transport.ErrNodeLost, n.id, silent.Round(time.Millisecond))
	s.drop(n, transport.Crashed) // first: settle must not drop it again
	for _, p := range n.calls {
		s.settle(p, answer{lost: err})
	}
	s.wake()
}
