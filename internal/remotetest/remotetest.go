// Package remotetest starts what the tests of a Remote pool's reporters
// (poolprom, poolotel) need: an embedded NATS server without a listener,
// worker nodes serving on it, and a Remote pool that sees them all. For
// tests only; everything ends with the test.
package remotetest

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/natsremote"
	"github.com/offloadgo/offload/natsremote/embedded"
	"github.com/offloadgo/offload/pool"
)

// Heartbeat is the nodes' and the pool's heartbeat: short, so that adverts
// follow a change within a test's patience.
const Heartbeat = 20 * time.Millisecond

// Node is a worker node to start: its name and its local pool's workers.
type Node struct {
	Name    string
	Workers int
}

// Pool starts nodes serving the pool named name and returns a Remote pool
// of workers workers that knows them all. A node's ID is its Name, a dash
// and a random suffix.
func Pool(t testing.TB, name string, workers int, nodes ...Node) *pool.Pool {
	t.Helper()
	quiet := slog.New(slog.DiscardHandler)
	s, err := embedded.Start(embedded.Options{})
	require.NoError(t, err)
	t.Cleanup(s.Shutdown)
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, len(nodes))
	t.Cleanup(func() {
		stop()
		for range nodes {
			<-served
		}
	})
	for _, n := range nodes {
		nc, err := s.Connect()
		require.NoError(t, err)
		t.Cleanup(nc.Close)
		go func() {
			served <- natsremote.Serve(ctx, nc, natsremote.ServeOptions{
				Pool: name, Name: n.Name, Heartbeat: Heartbeat, Local: pool.Options{Workers: n.Workers}, Logger: quiet})
		}()
	}
	nc, err := s.Connect()
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	tr, err := natsremote.New(nc, natsremote.Options{Pool: name, Heartbeat: Heartbeat})
	require.NoError(t, err)
	p, err := pool.New(pool.Options{Workers: workers, Isolation: pool.Remote, Transport: tr, Logger: quiet})
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Close() })
	require.Eventually(t, func() bool { return len(p.Nodes()) == len(nodes) }, 10*time.Second, Heartbeat,
		"the pool should see its %d nodes", len(nodes))
	return p
}
