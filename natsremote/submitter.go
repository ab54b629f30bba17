package natsremote

import (
	"bytes"
	"context"
	crand "crypto/rand"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/offloadgo/offload/internal/blobjson"
	"github.com/offloadgo/offload/internal/codec"
	"github.com/offloadgo/offload/internal/registry"
	"github.com/offloadgo/offload/internal/seam"
	"github.com/offloadgo/offload/internal/shmbuf"
)

// submitter is one Remote pool's transport: its subscriptions, its view
// of the nodes (submitter_nodes.go), its calls in flight
// (submitter_calls.go), the runners that send them
// (submitter_runner.go) and the watcher that pings nodes and gives up on
// silent ones (submitter_watch.go).
type submitter struct {
	nc    *nats.Conn
	o     Options
	env   seam.Env
	inbox string // answers and pongs come on inbox.>: see submitter_replies.go
	subs  []*nats.Subscription
	out   *outbox // events and logs, run outside the lock, in order

	sizes  codec.SizeHints // of inputs, to size call bodies
	bodies codec.Bodies    // call bodies sent, for reuse

	mu      sync.Mutex
	rng     *rand.ChaCha8               // tokens, nonces and reply secrets: unguessable
	nodes   map[string]*knownNode       // by ID
	names   map[string]*nameGroup       // the nodes of each name
	groups  []*nameGroup                // the same, for candidate's walk
	byKey   map[uint64]*knownNode       // by the key its pongs echo
	calls   map[uint64]*pending         // in flight, by call ID
	lastID  uint64                      // the last call ID (and node key) given out
	changed chan struct{}               // closed when a node may have room: see wake
	waiting int                         // runners waiting for room
	boundAt time.Time                   // when Bind asked the nodes to advertise
	allSeen bool                        // a heartbeat has passed since: the node view is complete
	probing int                         // nodes not yet verified
	slots   atomic.Int64                // what the live nodes offer: see Slots
	stopped chan struct{}               // closed once the pool has closed
	ignored [ignoredKinds]atomic.Uint64 // messages ignored, by why: see reportIgnored

	// dropped counts answers to calls no longer waited for: late results
	// from nodes given up on, answers to calls whose caller left.
	dropped atomic.Uint64
}

func newSubmitter(nc *nats.Conn, o Options, env seam.Env) *submitter {
	var seed [32]byte
	_, _ = crand.Read(seed[:]) // never fails (crypto/rand's contract)
	s := &submitter{
		nc:      nc,
		o:       o,
		env:     env,
		inbox:   newInbox(nc),
		out:     newOutbox(),
		rng:     rand.NewChaCha8(seed),
		nodes:   map[string]*knownNode{},
		names:   map[string]*nameGroup{},
		byKey:   map[uint64]*knownNode{},
		calls:   map[uint64]*pending{},
		changed: make(chan struct{}),
		stopped: make(chan struct{}),
	}
	s.slots.Store(-1)
	return s
}

// subscribe listens for answers and adverts, waits until the server has
// the subscriptions, then asks every node to advertise.
func (s *submitter) subscribe() error {
	for subj, handler := range map[string]nats.MsgHandler{s.inbox + ".>": s.onReply, advertSubject(s.o.Pool): s.onAdvert} {
		sub, err := s.nc.Subscribe(subj, handler)
		if err != nil {
			return fmt.Errorf("natsremote: subscribe %s: %w", subj, err)
		}
		s.subs = append(s.subs, sub)
	}
	// Answers are bounded by the calls in flight, one each (and a pong per
	// node): let them queue up to that many of the largest messages, so
	// that large outputs at once are not dropped here as a slow
	// consumer's. (The server's own buffer for the connection, its
	// max_pending, must hold them too: see the README.)
	if err := s.subs[0].SetPendingLimits(64<<10, s.pendingBytes(s.env.Workers)); err != nil {
		return fmt.Errorf("natsremote: %w", err)
	}
	if err := s.nc.FlushTimeout(bindTimeout); err != nil {
		return fmt.Errorf("natsremote: %w", err)
	}
	s.mu.Lock()
	s.boundAt = time.Now()
	s.mu.Unlock()
	if err := s.nc.Publish(discoverSubject(s.o.Pool), nil); err != nil {
		return fmt.Errorf("natsremote: %w", err)
	}
	return nil
}

// pendingBytes is how many bytes of answers may queue on the client for
// a pool of workers calls in flight (see subscribe).
func (s *submitter) pendingBytes(workers int) int {
	return max(64<<20, int(s.nc.MaxPayload())*(workers+8))
}

// Resize follows the pool's new Workers (pool.Pool.SetWorkers): the
// answers may queue up to that many calls' worth. A pool that has closed
// has no subscription left to resize, which is no error.
func (s *submitter) Resize(workers int) {
	_ = s.subs[0].SetPendingLimits(64<<10, s.pendingBytes(workers))
}

// start starts the watcher and the outbox, which end with the pool.
func (s *submitter) start() {
	go s.out.run(s.stopped)
	go s.watch()
	context.AfterFunc(s.env.Stop, func() {
		s.unsubscribe()
		close(s.stopped)
	})
}

// unsubscribe ends the subscriptions, once the pool has closed.
func (s *submitter) unsubscribe() {
	for _, sub := range s.subs {
		_ = sub.Unsubscribe()
	}
}

// token returns a fresh random token (never 0). s.mu is held.
func (s *submitter) token() uint64 {
	for {
		if t := s.rng.Uint64(); t != 0 {
			return t
		}
	}
}

// Encode returns the whole body of the call message: the header and the
// start bound (written at send time), the call's head and the input's
// msgpack, or for a program's task (form JSON) the input as a program
// value (wire_program.go), with no fingerprint: the node has no Go types
// to compare. Buffers in the input are copied into it (see package
// transfer). An input over the connection's maximum payload fails with
// ErrPayloadTooLarge, before admission.
func (s *submitter) Encode(task string, trace []byte, in any, form seam.Form) ([]byte, error) {
	e, ok := registry.Lookup(task)
	if !ok {
		return nil, fmt.Errorf("%w: %q", seam.ErrUnknownTask, task)
	}
	switch {
	case len(task) > maxNameLen:
		return nil, fmt.Errorf("natsremote: task name %.40q... is %d bytes, over %d", task, len(task), maxNameLen)
	case len(trace) > maxTraceLen:
		return nil, fmt.Errorf("%w: the trace context of task %q is %d bytes, over %d", seam.ErrPayloadTooLarge, task, len(trace), maxTraceLen)
	}
	if form == seam.JSON {
		return s.encodeProgram(task, trace, in)
	}
	head := appendHeader(s.bodies.Get(headerLen+32+len(trace)+len(task)+s.sizes.Guess(task, in)), header{kind: kindCall})
	head = appendCallHead(head, callHead{heartbeat: uint64(s.o.Heartbeat), fingerprint: e.Fingerprint, trace: trace, task: task})
	buf := bytes.NewBuffer(head)
	var err error
	if form == seam.Moves {
		_, err = codec.PeerEncodeInto(buf, shmbuf.CopyPeer{}, in)
	} else {
		err = codec.MarshalInto(buf, in)
	}
	if err != nil {
		s.bodies.Recycle(buf.Bytes())
		return nil, fmt.Errorf("pool: encode input of task %q: %w", task, err)
	}
	if err := s.checkPayload(task, buf.Len()); err != nil {
		s.bodies.Recycle(buf.Bytes())
		return nil, err
	}
	s.sizes.Record(task, buf.Len()-len(head))
	return buf.Bytes(), nil
}

// encodeProgram is Encode for a program's task: its input as JSON and its
// blob (internal/blobjson), with no fingerprint.
func (s *submitter) encodeProgram(task string, trace []byte, in any) ([]byte, error) {
	js, field, blob, err := blobjson.Marshal(in)
	if err != nil {
		return nil, fmt.Errorf("pool: encode input of task %q as JSON: %w", task, err)
	}
	v := blobjson.Raw{JSON: js, Field: field, Blob: blob}
	head := appendHeader(s.bodies.Get(headerLen+32+len(trace)+len(task)+programValueLen(v)), header{kind: kindProgramCall})
	head = appendCallHead(head, callHead{heartbeat: uint64(s.o.Heartbeat), trace: trace, task: task})
	body := appendProgramValue(head, v)
	if err := s.checkPayload(task, len(body)); err != nil {
		s.bodies.Recycle(body)
		return nil, err
	}
	return body, nil
}

// checkPayload fails a call of n bytes over the connection's maximum
// payload.
func (s *submitter) checkPayload(task string, n int) error {
	if limit := s.nc.MaxPayload(); int64(n) > limit {
		return fmt.Errorf("%w: input of task %q is %d bytes with its header, over the NATS connection's maximum payload %d",
			seam.ErrPayloadTooLarge, task, n, limit)
	}
	return nil
}

// stamp writes a call's header and start bound into its payload, made by
// Encode, as it is sent.
func stamp(payload []byte, h header, startBy time.Time) {
	putHeader(payload, h)
	binary.BigEndian.PutUint64(payload[headerLen+16:], uint64(max(startBy.UnixNano(), 1)))
}

// NewRunner returns the runner of worker goroutine id.
var _ seam.Resizer = (*submitter)(nil)

func (s *submitter) NewRunner(id int) seam.Runner {
	return &runner{s: s, id: id, p: pending{answer: make(chan answer, 1), fullAt: map[uint64]uint64{}}}
}

// Slots is what the live nodes offer: their slots, added up; -1 until the
// pool has had a heartbeat to discover its nodes (see pool's capacity).
func (s *submitter) Slots() int { return int(s.slots.Load()) }

// Nodes lists the nodes the pool knows to be alive, by ID (see
// pool.Pool.Nodes).
func (s *submitter) Nodes() []seam.NodeStats {
	now := time.Now()
	s.mu.Lock()
	out := make([]seam.NodeStats, 0, len(s.nodes))
	for _, n := range s.nodes {
		if !n.verified {
			continue
		}
		out = append(out, seam.NodeStats{
			ID: n.id, Workers: n.workers, Busy: n.busy, Free: n.free,
			InFlight: len(n.calls), AdvertAge: now.Sub(n.advertAt),
		})
	}
	s.mu.Unlock()
	slices.SortFunc(out, func(a, b seam.NodeStats) int { return strings.Compare(a.ID, b.ID) })
	return out
}
