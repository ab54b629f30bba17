package remotetest

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/internal/testkit"
	"github.com/offloadgo/offload/natsremote"
	"github.com/offloadgo/offload/natsremote/embedded"
	"github.com/offloadgo/offload/pool"
)

// Quiet is a logger for what the tests don't look at.
var Quiet = slog.New(slog.DiscardHandler)

// StartServer starts an embedded NATS server that shuts down with the test.
func StartServer(t testing.TB, o embedded.Options) *embedded.Server {
	t.Helper()
	s, err := embedded.Start(o)
	require.NoError(t, err)
	t.Cleanup(s.Shutdown)
	return s
}

// Connect connects to s in process; the connection closes with the test.
func Connect(t testing.TB, s *embedded.Server) *nats.Conn {
	t.Helper()
	nc, err := s.Connect()
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	return nc
}

// Harness starts nodes and Remote pools with one heartbeat: the node's
// and the transport's, where the options leave it zero.
type Harness struct {
	Heartbeat time.Duration
}

// Served is a Serve running for a test, on a connection of its own.
type Served struct {
	NC   *nats.Conn
	Stop context.CancelFunc
	Done chan struct{} // closed when Serve has returned Err
	Err  error
}

// Wait waits (at most 10 s) for Serve to return, and returns its error.
func (n *Served) Wait(t testing.TB) error {
	t.Helper()
	select {
	case <-n.Done:
		return n.Err
	case <-time.After(10 * time.Second):
		t.Error("Serve did not return within 10 s")
		return nil
	}
}

// Serve runs a node on its own connection to s, until the test ends or
// Stop is called.
func (h Harness) Serve(t testing.TB, s *embedded.Server, o natsremote.ServeOptions) *Served {
	t.Helper()
	return h.ServeOn(t, Connect(t, s), o)
}

// ServeOn runs a node on nc, until the test ends or Stop is called. A node
// of Subprocess workers where New refuses them skips the test, with New's
// reason.
func (h Harness) ServeOn(t testing.TB, nc *nats.Conn, o natsremote.ServeOptions) *Served {
	t.Helper()
	if o.Heartbeat == 0 {
		o.Heartbeat = h.Heartbeat
	}
	if o.Logger == nil {
		o.Logger = Quiet
	}
	if o.Local.Isolation == pool.Subprocess {
		probe, err := pool.New(pool.Options{Workers: 1, Isolation: pool.Subprocess})
		testkit.SkipUnsupported(t, err)
		require.NoError(t, err)
		require.NoError(t, probe.Close())
	}
	ctx, cancel := context.WithCancel(context.Background())
	n := &Served{NC: nc, Stop: cancel, Done: make(chan struct{})}
	go func() {
		defer close(n.Done)
		n.Err = natsremote.Serve(ctx, nc, o)
	}()
	t.Cleanup(func() {
		cancel()
		n.Wait(t)
	})
	return n
}

// RemotePool makes a Remote pool named name on nc, closed with the test.
func (h Harness) RemotePool(t testing.TB, nc *nats.Conn, name string, o pool.Options) *pool.Pool {
	t.Helper()
	tr, err := natsremote.New(nc, natsremote.Options{Pool: name, Heartbeat: h.Heartbeat})
	require.NoError(t, err)
	o.Isolation, o.Transport = pool.Remote, tr
	if o.Logger == nil {
		o.Logger = Quiet
	}
	p, err := pool.New(o)
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Close() })
	return p
}

// WaitNodes waits until p knows n nodes. Its bound guards against a hang
// and is testkit.CtxBound: in CI, beside other packages' -race tests and a
// rogue's flood of forged answers, verifying nodes took over 10 s.
func WaitNodes(t testing.TB, p *pool.Pool, n int) {
	t.Helper()
	if !assert.Eventually(t, func() bool { return len(p.Nodes()) == n }, testkit.CtxBound, 5*time.Millisecond,
		"the pool should see %d nodes", n) {
		t.Fatalf("the pool sees %+v", p.Nodes())
	}
}
