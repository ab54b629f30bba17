package natsremote

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/offloadgo/offload/pool"
)

// DefaultHeartbeat is Options.Heartbeat's and ServeOptions.Heartbeat's
// default: a lost node fails its calls within 3 s.
const DefaultHeartbeat = time.Second

// DefaultMaxNodesPerName is Options.MaxNodesPerName's default.
const DefaultMaxNodesPerName = 8

// Bounds of a heartbeat.
const (
	minHeartbeat = 10 * time.Millisecond
	maxHeartbeat = time.Hour
)

// Options configure the submitter's side of a Remote pool (New). Pool is
// required; the zero value of every other field is a documented default.
type Options struct {
	// Pool names the pool: nodes that Serve the same name run its tasks.
	// A NATS subject token: 1–128 bytes, none of '.', '*', '>' or spaces.
	Pool string
	// Heartbeat is how often the pool pings each node that runs its
	// calls. A node not heard from for 2.5 heartbeats (no answer, pong or
	// advert) is lost: its calls fail with pool.ErrNodeLost, at most 3
	// heartbeats after the node last spoke (or after its first call was
	// sent, if that is later). A node ends the calls of a pool it has not
	// heard from for 3 heartbeats. 0 means DefaultHeartbeat; at least
	// 10 ms, at most an hour.
	//
	// A pong travels behind the answers the node sent before it: with
	// outputs of many MiB, choose a heartbeat well over the time the
	// node's answers in flight take to arrive, or a busy node is taken
	// for lost.
	Heartbeat time.Duration
	// MaxNodesPerName bounds how many live nodes of one name
	// (ServeOptions.Name, which NodePermissions ties to one NATS user) the
	// pool knows at once: the adverts of more are ignored until one of
	// them leaves. A credential that may take calls
	// as offload.P.node.NAME.* can answer for any number of suffixes; this
	// keeps it from filling the pool's table of nodes (1024), and calls
	// are spread over names first (see the package doc), so that its many
	// nodes draw the calls of one. Nodes started without a Name share
	// their host's: raise this to run more than that many on one host,
	// or name them. 0 means DefaultMaxNodesPerName; at least 2, so that a
	// node restarting (under a new suffix) joins while its old self is
	// still known; at most 1024.
	MaxNodesPerName int
}

// ServeOptions configure a worker node (Serve). Pool is required; the zero
// value of every other field is a documented default.
type ServeOptions struct {
	// Pool names the pool whose tasks the node runs (see Options.Pool).
	Pool string
	// Local configures the node's own pool, which runs the calls: its
	// Workers are the node's slots. The node admits without queueing, so
	// MaxQueue must be 0 or pool.NoQueue (it is set to NoQueue); a full
	// node answers "full" and the submitter tries another. Isolation
	// Subprocess keeps hard kill, MemoryLimit and crash isolation on the
	// node, and with a Subprocess.Command makes the node serve that
	// program's tasks instead of Go's (see the package doc); Remote is
	// refused.
	Local pool.Options
	// Heartbeat is how often the node advertises its free slots. 0 means
	// DefaultHeartbeat; at least 10 ms.
	Heartbeat time.Duration
	// Name names the node: its ID is Name, '-' and a random suffix, and
	// it takes calls on offload.POOL.node.NAME.SUFFIX, so that a NATS user
	// allowed only those subjects (NodePermissions) can serve as this
	// node and read no other node's calls. "" means the host's name.
	// Characters a subject token can't hold become '_'.
	Name string
	// Drain is how long running calls may go on once Serve's ctx ends
	// (the node takes no new ones, and goes on answering pings) before
	// the node's pool closes under them: their callers then get
	// pool.ErrNodeLost. 0 means DefaultDrain (25 s, for a rolling
	// deploy); NoDrain means none.
	Drain time.Duration
	// Logger receives the node's reports; nil means slog.Default().
	Logger *slog.Logger
}

// fillHeartbeat checks a heartbeat and fills in its default.
func fillHeartbeat(h *time.Duration) error {
	switch {
	case *h == 0:
		*h = DefaultHeartbeat
	case *h < minHeartbeat || *h > maxHeartbeat:
		return fmt.Errorf("natsremote: Heartbeat is %v, want %v..%v", *h, minHeartbeat, maxHeartbeat)
	}
	return nil
}

// fillDefaults checks o and fills in its defaults.
func (o *Options) fillDefaults() error {
	if err := checkToken("Pool", o.Pool); err != nil {
		return err
	}
	switch {
	case o.MaxNodesPerName == 0:
		o.MaxNodesPerName = DefaultMaxNodesPerName
	case o.MaxNodesPerName < 2 || o.MaxNodesPerName > maxNodes:
		return fmt.Errorf("natsremote: MaxNodesPerName is %d, want 2..%d (so that a node restarting joins beside its old self)", o.MaxNodesPerName, maxNodes)
	}
	return fillHeartbeat(&o.Heartbeat)
}

// fillDefaults checks o and fills in its defaults.
func (o *ServeOptions) fillDefaults() error {
	if err := checkToken("Pool", o.Pool); err != nil {
		return err
	}
	if err := fillHeartbeat(&o.Heartbeat); err != nil {
		return err
	}
	switch {
	case o.Local.MaxQueue != 0 && o.Local.MaxQueue != pool.NoQueue:
		return fmt.Errorf("natsremote: Local.MaxQueue is %d; a node admits without queueing (0 or pool.NoQueue)", o.Local.MaxQueue)
	case o.Local.Isolation == pool.Remote:
		return errors.New("natsremote: Local.Isolation is Remote; a node runs its calls itself")
	case o.Drain < 0 && o.Drain != NoDrain:
		return fmt.Errorf("natsremote: Drain is %v, want >= 0 or NoDrain", o.Drain)
	case o.Drain == 0:
		o.Drain = DefaultDrain
	}
	o.Local.MaxQueue = pool.NoQueue
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Local.Logger == nil {
		o.Local.Logger = o.Logger
	}
	return nil
}
