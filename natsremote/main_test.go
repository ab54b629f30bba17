package natsremote_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/offloadgo/offload/internal/testkit"
	"github.com/offloadgo/offload/natsremote"
	"github.com/offloadgo/offload/natsremote/embedded"
	"github.com/offloadgo/offload/pool"
)

func TestMain(m *testing.M) {
	natsremote.Main() // the test binary is also the node processes and their worker processes
	goleak.VerifyTestMain(m)
}

// testHeartbeat is the tests' heartbeat (see natsremote.TestHeartbeat).
const testHeartbeat = natsremote.TestHeartbeat

// quiet is a logger for what the tests don't look at.
var quiet = slog.New(slog.DiscardHandler)

// startServer starts an embedded NATS server for the test.
func startServer(t *testing.T, o embedded.Options) *embedded.Server {
	t.Helper()
	s, err := embedded.Start(o)
	require.NoError(t, err)
	t.Cleanup(s.Shutdown)
	return s
}

// connect connects to s in process; the connection closes with the test.
func connect(t *testing.T, s *embedded.Server) *nats.Conn {
	t.Helper()
	nc, err := s.Connect()
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	return nc
}

// node is a Serve running for a test, on a connection of its own.
type node struct {
	nc   *nats.Conn
	stop context.CancelFunc
	done chan struct{} // closed when Serve has returned err
	err  error
}

// wait waits (at most 10 s) for Serve to return, and returns its error.
func (n *node) wait(t *testing.T) error {
	t.Helper()
	select {
	case <-n.done:
		return n.err
	case <-time.After(10 * time.Second):
		t.Error("Serve did not return within 10 s")
		return nil
	}
}

// serve runs a node on its own connection to s, until the test ends or
// stop is called.
func serve(t *testing.T, s *embedded.Server, o natsremote.ServeOptions) *node {
	t.Helper()
	return serveOn(t, connect(t, s), o)
}

// serveOn runs a node on nc, until the test ends or stop is called.
func serveOn(t *testing.T, nc *nats.Conn, o natsremote.ServeOptions) *node {
	t.Helper()
	if o.Heartbeat == 0 {
		o.Heartbeat = testHeartbeat
	}
	if o.Logger == nil {
		o.Logger = quiet
	}
	if o.Local.Isolation == pool.Subprocess {
		// Probe where the node would fail: off Linux, skip with New's reason.
		probe, err := pool.New(pool.Options{Workers: 1, Isolation: pool.Subprocess})
		testkit.SkipUnsupported(t, err)
		require.NoError(t, err)
		require.NoError(t, probe.Close())
	}
	ctx, cancel := context.WithCancel(context.Background())
	n := &node{nc: nc, stop: cancel, done: make(chan struct{})}
	go func() {
		defer close(n.done)
		n.err = natsremote.Serve(ctx, nc, o)
	}()
	t.Cleanup(func() {
		cancel()
		n.wait(t)
	})
	return n
}

// remotePool makes a Remote pool on nc for the test, closed with it.
func remotePool(t *testing.T, nc *nats.Conn, name string, o pool.Options) *pool.Pool {
	t.Helper()
	return remotePoolBeating(t, nc, name, testHeartbeat, o)
}

// remotePoolBeating is remotePool with heartbeat as its transport's.
func remotePoolBeating(t *testing.T, nc *nats.Conn, name string, heartbeat time.Duration, o pool.Options) *pool.Pool {
	t.Helper()
	tr, err := natsremote.New(nc, natsremote.Options{Pool: name, Heartbeat: heartbeat})
	require.NoError(t, err)
	o.Isolation, o.Transport = pool.Remote, tr
	if o.Logger == nil {
		o.Logger = quiet
	}
	p, err := pool.New(o)
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Close() })
	return p
}

// waitNodes waits until p knows n nodes. Its bound guards against a hang
// and is as long as testCtx's: in CI, beside other packages' -race tests
// and a rogue's flood of forged answers, verifying nodes took over 10 s.
func waitNodes(t *testing.T, p *pool.Pool, n int) {
	t.Helper()
	require.Eventually(t, func() bool { return len(p.Nodes()) == n }, time.Minute, 5*time.Millisecond,
		"the pool should see %d nodes", n)
}

// testCtx is a ctx that ends with the test, or after a minute.
func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}
