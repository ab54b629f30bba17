package natsremote_test

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/natsremote"
	"github.com/offloadgo/offload/natsremote/embedded"
	"github.com/offloadgo/offload/pool"
)

// dial connects over TCP to url, reconnecting quickly to any server of
// the cluster when it loses its own.
func dial(t *testing.T, url string) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect(url, nats.MaxReconnects(-1), nats.ReconnectWait(20*time.Millisecond), nats.ReconnectJitter(0, 0))
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	return nc
}

// The server a node is connected to shuts down while the node runs tasks:
// the node moves to another server of the cluster, and every Future
// resolves exactly once — with its result if the answer made it across,
// else with ErrNodeLost — and the pool carries on.
func TestClusterServerShutsDownUnderANode(t *testing.T) {
	t.Parallel()
	c, err := embedded.StartCluster(3, embedded.Options{})
	require.NoError(t, err)
	t.Cleanup(c.Shutdown)
	nodeConn := dial(t, c.Servers[2].ClientURL())
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- natsremote.Serve(ctx, nodeConn, natsremote.ServeOptions{
			Pool: "cluster", Heartbeat: testHeartbeat, Logger: quiet, Local: pool.Options{Workers: 4},
		})
	}()
	t.Cleanup(func() {
		stop()
		require.NoError(t, <-done)
	})
	p := remotePool(t, dial(t, c.Servers[0].ClientURL()), "cluster", pool.Options{Workers: 4, MaxQueue: 64})
	waitNodes(t, p, 1)
	out, err := pool.Run(testCtx(t), p, add, [2]int{1, 1})
	require.NoError(t, err, "the routes carry calls")
	require.Equal(t, 2, out)

	var fs []*pool.Future[int]
	for range 4 {
		f, err := pool.Submit(testCtx(t), p, sleep, 300*time.Millisecond)
		require.NoError(t, err)
		fs = append(fs, f)
	}
	require.Eventually(t, func() bool { return p.Nodes()[0].InFlight == 4 }, 10*time.Second, time.Millisecond)
	c.Servers[2].Shutdown()
	for range 8 { // and more work while the node moves
		f, err := pool.Submit(testCtx(t), p, sleep, 10*time.Millisecond)
		require.NoError(t, err)
		fs = append(fs, f)
	}
	var results, lost int
	for _, f := range fs {
		select {
		case <-f.Done():
		case <-time.After(time.Minute):
			t.Fatal("a Future never resolved")
		}
		switch _, err := f.Wait(); {
		case err == nil:
			results++
		case assert.ErrorIs(t, err, pool.ErrNodeLost):
			lost++
		}
	}
	t.Logf("%d results, %d lost", results, lost)
	st := p.Stats()
	assert.EqualValues(t, 1+len(fs), st.Completed+st.Failed, "each Future counted once: %+v", st)
	assert.EqualValues(t, 1+results, st.Completed, "%+v", st)

	out, err = pool.Run(testCtx(t), p, add, [2]int{2, 2})
	require.NoError(t, err, "the node serves again, through another server")
	assert.Equal(t, 4, out)
	assert.Contains(t, []string{c.Servers[0].ClientURL(), c.Servers[1].ClientURL()}, nodeConn.ConnectedUrl())
}
