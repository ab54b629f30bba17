package natsremote

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/offloadgo/offload/internal/seam"
)

// pick finds a node with room for p's call of task and makes p its next
// call there (see candidates). With no room anywhere it waits for some,
// until ctx ends (returning ctx's cause), until roomBy if not zero
// (errNoRoom), or, while no node is live at all, until nodeBy
// (errNoNode); if every live node has refused the task, it fails with
// ErrUnknownTask. A call whose worker process did not start on
// maxNotStarted nodes, or on every live node that did not refuse the
// task, fails with errNotStarted.
func (s *submitter) pick(ctx context.Context, task string, p *pending, roomBy, nodeBy time.Time) error {
	for {
		if s.nc.IsClosed() {
			return errConnClosed
		}
		now := time.Now()
		s.mu.Lock()
		if len(p.notStarted) >= maxNotStarted {
			s.mu.Unlock()
			return errNotStarted
		}
		n, live, refused := s.candidate(task, p, now)
		if n != nil {
			s.register(n, p, now)
			s.mu.Unlock()
			return nil
		}
		if len(p.notStarted) > 0 && refused == live {
			s.mu.Unlock()
			return errNotStarted
		}
		if live > 0 && refused == live {
			s.mu.Unlock()
			return fmt.Errorf("%w: %q: %s", seam.ErrUnknownTask, task, errNoServer)
		}
		look := s.o.Heartbeat // look again: nodes may have gone quiet
		for _, by := range []struct {
			t   time.Time
			err error
		}{{roomBy, errNoRoom}, {nodeBy, errNoNode}} {
			if by.t.IsZero() || by.err == errNoNode && live > 0 {
				continue
			}
			if look = min(look, by.t.Sub(now)); look <= 0 {
				s.mu.Unlock()
				return by.err
			}
		}
		s.waitForChange(ctx, look)
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
	}
}

// waitForChange waits until a node may have room (see wake), look has
// passed, or ctx ends. s.mu is held on entry and released on return.
func (s *submitter) waitForChange(ctx context.Context, look time.Duration) {
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
}

// candidate is the node for p's call of task, chosen by name first and
// then by node (power of two choices at each step): of two names drawn at
// random among those with a node with room, the one whose own pick has
// more room; a name's pick is, of two of its nodes with room drawn at
// random, the one with more. So a name's share of the calls does not
// grow with the number of its nodes, which one credential can multiply
// (see nameGroup). A node that turned this call away as full has no room
// for it until it reports again, and one that refused the task none at
// all. A node whose worker process did not start for this call is not
// there for it at all: it counts neither as usable nor as refusing. It
// also says how many nodes are usable, and how many of those refused the
// task.
//
// It walks the whole table, once: O(nodes), at most maxNodes (plus
// maxProbing not yet verified, skipped), with no allocation; see
// BenchmarkCandidate. s.mu is held.
func (s *submitter) candidate(task string, p *pending, now time.Time) (pick *knownNode, live, refused int) {
	var names twoChoices
	for _, g := range s.groups {
		var nodes twoChoices
		for _, n := range g.nodes {
			if !s.usable(n, now) || slices.Contains(p.notStarted, n.key) {
				continue
			}
			if live++; n.refused[task] {
				refused++
				continue
			}
			if at, full := p.fullAt[n.key]; full && at == n.reports || n.room() <= 0 {
				continue
			}
			nodes.offer(n)
		}
		if n := nodes.better(); n != nil {
			names.offer(n)
		}
	}
	return names.better(), live, refused
}

// twoChoices draws two distinct nodes uniformly from those it is offered,
// one pass and no slice (reservoir sampling), and keeps the one with more
// room.
type twoChoices struct {
	a, b    *knownNode
	offered int
}

func (c *twoChoices) offer(n *knownNode) {
	switch c.offered++; {
	case c.a == nil:
		c.a = n
	case c.b == nil:
		c.b = n
	case rand.IntN(c.offered) < 2:
		if rand.IntN(2) == 0 {
			c.a = n
		} else {
			c.b = n
		}
	}
}

// better is the one of the two with more room, by a coin if they have as
// much; nil if none was offered.
func (c *twoChoices) better() *knownNode {
	if c.b != nil && (c.b.room() > c.a.room() || c.b.room() == c.a.room() && rand.IntN(2) == 0) {
		return c.b
	}
	return c.a
}

var errConnClosed = errors.New("natsremote: the NATS connection is closed")

// errNoRoom is pick giving up at roomBy: no node had a free slot.
var errNoRoom = errors.New("natsremote: no worker node had a free slot")

// errNoNode is pick giving up at nodeBy: no node was live.
var errNoNode = errors.New("natsremote: no worker node is available")

// errNoServer is pick's error when every live node refused the task.
var errNoServer = errors.New("no live node serves it")

// maxNotStarted is how many nodes a call goes to whose worker process
// then does not start for it. Nothing ran, so another node may run it;
// but a start that fails on one node most often fails on its fellows
// too (a build whose main does not call Main, a host out of memory or
// processes), each try costs a node a process start (up to its
// StartTimeout) and the caller that wait, and the caller's 503 says
// "try again later". Three tries get past a few broken nodes, and stop
// soon where all are.
const maxNotStarted = 3

// errNotStarted is pick giving up on a call whose worker process did not
// start on the nodes it went to (see maxNotStarted).
var errNotStarted = errors.New("natsremote: no worker process started for the call")
