package natsremote

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/offloadgo/offload/internal/codec"
	"github.com/offloadgo/offload/internal/registry"
	"github.com/offloadgo/offload/internal/transport"
	"github.com/offloadgo/offload/internal/xfer"
	"github.com/offloadgo/offload/pool"
)

// Transport is the submitter's side of Remote pools over one NATS
// connection: give it to pool.New as Options.Transport, with Isolation
// pool.Remote. Each pool it is given to subscribes on its own and keeps
// its own view of the nodes, until the pool closes; the connection stays
// the caller's, to close after the pools. Make it with New; safe for
// concurrent use.
type Transport struct {
	nc *nats.Conn
	o  Options
}

// New returns the transport of Remote pools that send their tasks over nc
// to the nodes serving o.Pool. It fails for invalid Options or a nil nc;
// it does not touch the network (pool.New does, when it binds it).
func New(nc *nats.Conn, o Options) (*Transport, error) {
	if nc == nil {
		return nil, fmt.Errorf("natsremote: New with a nil *nats.Conn")
	}
	if err := o.settle(); err != nil {
		return nil, err
	}
	return &Transport{nc: nc, o: o}, nil
}

var _ pool.Transport = (*Transport)(nil)

// bindTimeout bounds Bind's round trip to the NATS server.
const bindTimeout = 10 * time.Second

// Bind is for package pool, which calls it in New: it subscribes the new
// pool's inbox and the nodes' adverts, asks the nodes to advertise, and
// returns the pool's transport. It blocks for one round trip to the NATS
// server (at most 10 s); it fails if the connection is closed.
func (t *Transport) Bind(env transport.Env) (transport.Transport, error) {
	s := &submitter{
		nc:      t.nc,
		o:       t.o,
		env:     env,
		inbox:   t.nc.NewInbox(),
		nodes:   map[string]*node{},
		calls:   map[uint64]*pending{},
		changed: make(chan struct{}),
		stopped: make(chan struct{}),
	}
	if err := s.subscribe(); err != nil {
		s.unsubscribe()
		return nil, err
	}
	go s.watch()
	context.AfterFunc(env.Stop, s.unsubscribe)
	return s, nil
}

// submitter is one Remote pool's transport: its subscriptions, its view
// of the nodes (nodes.go), its calls in flight (answers.go) and the
// watcher that pings nodes and gives up on silent ones (watch.go).
type submitter struct {
	nc    *nats.Conn
	o     Options
	env   transport.Env
	inbox string // where the nodes answer
	subs  []*nats.Subscription

	sizes  codec.SizeHints // of inputs, to size call bodies
	bodies codec.Bodies    // call bodies sent, for reuse

	mu      sync.Mutex
	nodes   map[string]*node    // by ID
	calls   map[uint64]*pending // in flight, by call ID
	lastID  uint64              // the last call ID (and node key) given out
	changed chan struct{}       // closed when a node may have room: see wake
	waiting int                 // runners waiting for room

	stopped chan struct{} // closed once the subscriptions are gone
	// dropped counts answers to calls no longer waited for: late results
	// from nodes given up on, answers to calls whose caller left.
	dropped atomic.Uint64
}

// subscribe listens for answers and adverts, waits until the server has
// the subscriptions, then asks every node to advertise.
func (s *submitter) subscribe() error {
	for subj, handler := range map[string]nats.MsgHandler{s.inbox: s.onAnswer, advertSubject(s.o.Pool): s.onAdvert} {
		sub, err := s.nc.Subscribe(subj, handler)
		if err != nil {
			return fmt.Errorf("natsremote: subscribe %s: %w", subj, err)
		}
		s.subs = append(s.subs, sub)
	}
	if err := s.nc.FlushTimeout(bindTimeout); err != nil {
		return fmt.Errorf("natsremote: %w", err)
	}
	if err := s.nc.Publish(discoverSubject(s.o.Pool), nil); err != nil {
		return fmt.Errorf("natsremote: %w", err)
	}
	return nil
}

// unsubscribe ends the subscriptions, once the pool has closed; the
// watcher sees the pool's end itself.
func (s *submitter) unsubscribe() {
	for _, sub := range s.subs {
		_ = sub.Unsubscribe()
	}
}

// Encode returns the whole body of the call message: the header (its ID
// and deadline written at send time), the call's head and the input's
// msgpack. Buffers in the input are copied into it (see package
// transfer). An input over the connection's maximum payload fails with
// ErrPayloadTooLarge, before admission.
func (s *submitter) Encode(task string, in any, moves bool) ([]byte, error) {
	e, ok := registry.Lookup(task)
	if !ok {
		return nil, fmt.Errorf("%w: %q", transport.ErrUnknownTask, task)
	}
	if len(task) > maxNameLen {
		return nil, fmt.Errorf("natsremote: task name %.40q... is %d bytes, over %d", task, len(task), maxNameLen)
	}
	head := appendHeader(s.bodies.Get(headerLen+16+2+len(task)+s.sizes.Guess(task, in)), kindCall, 0, 0)
	head = appendCallHead(head, callHead{heartbeat: uint64(s.o.Heartbeat), fingerprint: e.Fingerprint, task: task})
	buf := bytes.NewBuffer(head)
	var err error
	if moves {
		_, err = codec.PeerEncodeInto(buf, xfer.CopyPeer, in)
	} else {
		err = codec.MarshalInto(buf, in)
	}
	if err != nil {
		s.bodies.Recycle(buf.Bytes())
		return nil, fmt.Errorf("pool: encode input of task %q: %w", task, err)
	}
	if limit := s.nc.MaxPayload(); int64(buf.Len()) > limit {
		s.bodies.Recycle(buf.Bytes())
		return nil, fmt.Errorf("%w: input of task %q is %d bytes with its header, over the NATS connection's maximum payload %d",
			transport.ErrPayloadTooLarge, task, buf.Len(), limit)
	}
	s.sizes.Record(task, buf.Len()-len(head))
	return buf.Bytes(), nil
}

// NewRunner returns the runner of worker goroutine id.
func (s *submitter) NewRunner(id int) transport.Runner {
	return &runner{s: s, id: id, p: pending{answer: make(chan answer, 1)}}
}
