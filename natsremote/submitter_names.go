package natsremote

import (
	"errors"

	"github.com/offloadgo/offload/internal/seam"
)

// nameGroup is the nodes of one name in a submitter's table: those of one
// NATS user, when each node name has its own (see NodePermissions). One
// credential can answer for any number of suffixes, so the table bounds
// what one name holds (Options.MaxNodesPerName), makes room for another
// name by evicting from the name that holds the most, and spreads calls
// over names before nodes (see candidate). Guarded by submitter.mu.
type nameGroup struct {
	name     string
	nodes    []*knownNode // verified or not, in no order
	verified int          // how many of nodes are
	at       int          // its index in submitter.groups
}

// full reports whether g holds all the live nodes one name may. Nodes
// not yet verified don't count: anyone may advertise under any name, and
// such adverts, which nobody answers, must not keep the name's real
// nodes out (maxProbing bounds them all).
func (g *nameGroup) full(limit int) bool { return g.verified >= limit }

// enter puts n, new, in the table, in its name's group. s.mu is held.
func (s *submitter) enter(n *knownNode, name string) {
	g := s.names[name]
	if g == nil {
		g = &nameGroup{name: name, at: len(s.groups)}
		s.names[name] = g
		s.groups = append(s.groups, g)
	}
	n.group, n.inGroup = g, len(g.nodes)
	g.nodes = append(g.nodes, n)
	s.nodes[n.id] = n
	s.byKey[n.key] = n
}

// exit takes n out of the table and its group; a group left empty goes
// too. Both are slices, the last element moving into the gap, so that
// candidate walks them without a map's cost. s.mu is held.
func (s *submitter) exit(n *knownNode) {
	delete(s.nodes, n.id)
	delete(s.byKey, n.key)
	g := n.group
	last := g.nodes[len(g.nodes)-1]
	g.nodes[n.inGroup], last.inGroup = last, n.inGroup
	g.nodes[len(g.nodes)-1] = nil
	g.nodes = g.nodes[:len(g.nodes)-1]
	if n.verified {
		g.verified--
	}
	if len(g.nodes) > 0 {
		return
	}
	delete(s.names, g.name)
	end := s.groups[len(s.groups)-1]
	s.groups[g.at], end.at = end, g.at
	s.groups[len(s.groups)-1] = nil
	s.groups = s.groups[:len(s.groups)-1]
}

// makeRoom reports whether n, answering its first ping, may become a
// node: yes while fewer than maxNodes are verified; else only by evicting
// an idle node of the name that holds the most, and only if that name
// holds at least two more than n's (so that it still holds no fewer
// afterwards, and two names never take turns evicting each other).
// Adverts alone never evict: only a node that answers on its own subject.
// s.mu is held.
func (s *submitter) makeRoom(n *knownNode) bool {
	if len(s.nodes)-s.probing < maxNodes {
		return true
	}
	var crowded *nameGroup
	for _, g := range s.groups {
		if crowded == nil || g.verified > crowded.verified {
			crowded = g
		}
	}
	if crowded.verified < n.group.verified+2 {
		return false
	}
	var victim *knownNode
	for _, m := range crowded.nodes {
		if m.verified && len(m.calls) == 0 && (victim == nil || m.heardAt.Before(victim.heardAt)) {
			victim = m
		}
	}
	if victim == nil {
		return false // all of its nodes run our calls: none is evicted under them
	}
	s.drop(victim, seam.NodeLeft, errEvicted)
	return true
}

// errEvicted is why a node left the table to make room for a node of
// another name.
var errEvicted = errors.New("evicted: the node table is full, and its name holds the most nodes")
