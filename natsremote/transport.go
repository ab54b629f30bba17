package natsremote

import (
	"fmt"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/offloadgo/offload/internal/seam"
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
	if err := o.fillDefaults(); err != nil {
		return nil, err
	}
	return &Transport{nc: nc, o: o}, nil
}

var _ pool.Transport = (*Transport)(nil)

// bindEnv and boundCarrier are the seam's types that Bind takes and
// returns, named here so that go doc prints no internal package.
type (
	bindEnv      = seam.Env
	boundCarrier = seam.Carrier
)

// bindTimeout bounds Bind's round trip to the NATS server.
const bindTimeout = 10 * time.Second

// Bind is for package pool, which calls it in New: it subscribes the new
// pool's inbox and the nodes' adverts, asks the nodes to advertise, and
// returns the pool's transport. It blocks for one round trip to the NATS
// server (at most 10 s); it fails if the connection is closed.
func (t *Transport) Bind(env bindEnv) (boundCarrier, error) {
	s := newSubmitter(t.nc, t.o, env)
	if err := s.subscribe(); err != nil {
		s.unsubscribe()
		return nil, err
	}
	s.start()
	return s, nil
}
