package seam

import "time"

// NodeStats is what a transport whose workers are nodes elsewhere knows of
// one of them: the node's own figures, from its latest pong or answer,
// and this pool's calls on it.
type NodeStats struct {
	ID       string // the node's name, as it advertises itself
	Workers  int    // its slots: the workers of its local pool
	Busy     int    // slots in use, as last reported (pongs)
	Free     int    // slots free, as last reported (pongs, answers)
	InFlight int    // this pool's calls the node runs now
	// AdvertAge is how long ago the node last advertised.
	AdvertAge time.Duration
}

// NodeLister is a Carrier that runs tasks on nodes and can list them.
// Nodes is safe for concurrent use and never blocks on the network.
type NodeLister interface {
	Nodes() []NodeStats
}

// SlotCounter is a Carrier whose workers come and go, such as a Remote
// pool's nodes: Slots is how many calls its live workers can run at once,
// or -1 while it does not know yet (just bound, still discovering). The
// pool admits no more than that allows. Slots is safe for concurrent use
// and cheap: an atomic load.
type SlotCounter interface {
	Slots() int
}

// EnvNodeURL names the environment variable that makes a binary a worker
// node of Remote pools (natsremote.EnvURL): natsremote.Main serves when it
// is set, and pool.Main refuses to run as if it were not.
const EnvNodeURL = "OFFLOAD_NATS_URL"
