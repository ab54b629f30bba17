package pool

import (
	"time"

	"github.com/offloadgo/offload/internal/seam"
)

// NodeStats describes one worker node of a Remote pool, from the node's
// latest pong or answer (adverts are hints only) and the pool's own calls.
type NodeStats struct {
	ID       string // the node's name, as it advertises itself
	Workers  int    // its slots: the workers of its local pool
	Busy     int    // slots in use, as last reported (pongs)
	Free     int    // slots free, as last reported (pongs, answers)
	InFlight int    // this pool's tasks running on it now
	// AdvertAge is how long ago the node last advertised.
	AdvertAge time.Duration
}

// Nodes lists the live worker nodes of a Remote pool (those that have
// answered its ping), with their figures, ordered by ID; nil for any
// other pool. The node figures are as the nodes
// last reported them, so they lag behind by up to a heartbeat (Stats'
// figures are the pool's own, and exact). Nodes never blocks on the
// network; it is safe for concurrent use, and after Close.
func (p *Pool) Nodes() []NodeStats {
	if p.usable() != nil {
		return nil
	}
	l, ok := p.transport.(seam.NodeLister)
	if !ok {
		return nil
	}
	nodes := l.Nodes()
	out := make([]NodeStats, len(nodes))
	for i, n := range nodes {
		out[i] = NodeStats(n)
	}
	return out
}
