package natsremote_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/natsremote"
	"github.com/offloadgo/offload/natsremote/embedded"
	"github.com/offloadgo/offload/pool"
)

// crowd is one node credential answering pings as any number of nodes:
// it may subscribe to offload.P.node.NAME.*, so every suffix it
// advertises answers its pings. Each claims free slots, and answers the
// calls it is sent with a result of its own.
type crowd struct {
	nc         *nats.Conn
	pool, name string
	free       int
	calls      atomic.Int32
	rounds     atomic.Int32 // times it advertised every suffix
	done       chan struct{}
	wg         sync.WaitGroup
}

// startCrowd answers pings and calls on nc for every suffix of name, and
// advertises suffixes 0..n-1 again and again (a round every 100 ms)
// until the test ends.
func startCrowd(t *testing.T, nc *nats.Conn, poolName, name string, n, free int) *crowd {
	t.Helper()
	c := &crowd{nc: nc, pool: poolName, name: name, free: free, done: make(chan struct{})}
	_, err := nc.Subscribe("offload."+poolName+".node."+name+".*", func(m *nats.Msg) {
		if len(m.Data) < 26 || m.Reply == "" {
			return // a cancel
		}
		kind, id, token := m.Data[1], m.Data[2:10], m.Data[18:26]
		h := rogueHeader(0, 0, uint64(c.free), 0)
		copy(h[2:10], id)
		copy(h[18:26], token)
		switch kind {
		case 1: // a call: a result
			c.calls.Add(1)
			h[1] = 18
			_ = m.Respond(append(h, 0xa1, 'X'))
		case 3: // a ping: a pong
			h[1] = 26
			_ = m.Respond(append(h, rogueStatus(c.free)...))
		}
	})
	require.NoError(t, err)
	require.NoError(t, nc.Flush())
	c.wg.Go(func() {
		for {
			for i := range n {
				_ = nc.Publish("offload."+poolName+".adverts", appendGhostAdvert(name, fmt.Sprint(i), free))
			}
			c.rounds.Add(1)
			select {
			case <-c.done:
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	})
	t.Cleanup(func() { close(c.done); c.wg.Wait() })
	return c
}

// nodesNamed counts p's nodes of a name.
func nodesNamed(p *pool.Pool, name string) (n int) {
	for _, st := range p.Nodes() {
		if strings.HasPrefix(st.ID, name+"-") {
			n++
		}
	}
	return n
}

// One node credential answering pings for 1,100 suffixes holds at most
// MaxNodesPerName places in the pool's node table, and draws calls as one
// name: a real node of another name started after it joins, and gets
// its share of the calls. The crowd's nodes each claim one free slot
// and the real node four, so the pick by name sends it nearly every
// call: a pick by node would send it about 2 in 9 (the pairs of the
// crowd's 8 and it that hold it), or 2 in 1,000 with the crowd's 1,024.
func TestOneNodeNameCannotCrowdOutOthers(t *testing.T) {
	t.Parallel()
	const name, calls = "crowd", 200
	s := trustServer(t, name)
	p := remotePoolBeating(t, connectAs(t, s, "svc"), name, trustHeartbeat, pool.Options{Workers: 1})
	c := startCrowd(t, connectAs(t, s, "rogue"), name, "rogue", 1100, 1)
	require.Eventually(t, func() bool { return c.rounds.Load() >= 5 && nodesNamed(p, "rogue") > 0 }, time.Minute, time.Millisecond,
		"the crowd advertised its 1,100 suffixes five times over, and is in")
	serveAs(t, s, "worker", natsremote.ServeOptions{Pool: name, Name: "worker", Local: pool.Options{Workers: 4}})
	require.Eventually(t, func() bool { return nodesNamed(p, "worker") == 1 }, 30*time.Second, time.Millisecond,
		"the real node joins (the crowd holds %d places)", nodesNamed(p, "rogue"))
	assert.LessOrEqual(t, nodesNamed(p, "rogue"), natsremote.DefaultMaxNodesPerName)

	ctx := testCtx(t)
	prefix := fmt.Sprintf("crowd-%d-", rand.Int())
	for i := range calls {
		_, err := pool.Run(ctx, p, tally, fmt.Sprint(prefix, i))
		require.NoError(t, err)
	}
	real := 0
	for i := range calls {
		real += int(runsOf(fmt.Sprint(prefix, i)))
	}
	t.Logf("of %d calls, the real node ran %d and the crowd (%d places) was sent %d", calls, real, nodesNamed(p, "rogue"), c.calls.Load())
	assert.GreaterOrEqual(t, real, calls/2, "the real node gets its share")
}

// A full node table makes room for a node of another name: the name that
// holds the most gives up an idle node, reported as one that left, and
// the pool's events and Nodes agree throughout.
func TestFullTableMakesRoomForAnotherName(t *testing.T) {
	t.Parallel()
	const name, table = "full-table", 1024
	s := startServer(t, embedded.Options{})
	var joined, left, lost atomic.Int32
	tr, err := natsremote.New(connect(t, s), natsremote.Options{Pool: name, Heartbeat: trustHeartbeat, MaxNodesPerName: table})
	require.NoError(t, err)
	p, err := pool.New(pool.Options{Workers: 4, Isolation: pool.Remote, Transport: tr, Logger: quiet,
		OnWorkerEvent: func(ev pool.WorkerEvent) {
			switch ev.Kind {
			case pool.NodeJoined:
				joined.Add(1)
			case pool.NodeLeft:
				left.Add(1)
			case pool.NodeLost:
				lost.Add(1)
			}
		}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Close() })
	startCrowd(t, connect(t, s), name, "crowd", table+76, 1)
	require.Eventually(t, func() bool { return len(p.Nodes()) == table }, time.Minute, time.Millisecond,
		"one name fills the table")
	serve(t, s, natsremote.ServeOptions{Pool: name, Name: "worker", Local: pool.Options{Workers: 4}})
	require.Eventually(t, func() bool { return nodesNamed(p, "worker") == 1 }, 30*time.Second, time.Millisecond,
		"a node of another name joins")
	require.Eventually(t, func() bool { return int(joined.Load()-left.Load()-lost.Load()) == len(p.Nodes()) }, 10*time.Second, time.Millisecond,
		"events and Nodes agree: joined %d, left %d, lost %d, %d nodes", joined.Load(), left.Load(), lost.Load(), len(p.Nodes()))
	assert.Equal(t, table, len(p.Nodes()))
	assert.Equal(t, table-1, nodesNamed(p, "crowd"))
	assert.Positive(t, left.Load(), "a node of the crowd was evicted")
}
