package natsremote_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/natsremote"
	"github.com/offloadgo/offload/natsremote/embedded"
	"github.com/offloadgo/offload/pool"
)

// A node that leaves gives its running calls its Drain, no more: a call
// that outlasts it fails with ErrNodeLost, saying the node shut down
// under it, no sooner than the drain's end; with NoDrain it fails at once.
// Serve returns nil either way.
func TestDrainBoundsTheWait(t *testing.T) {
	t.Parallel()
	for name, drain := range map[string]time.Duration{"drain": 300 * time.Millisecond, "none": natsremote.NoDrain} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := startServer(t, embedded.Options{})
			n := serve(t, s, natsremote.ServeOptions{Pool: "drain-" + name, Drain: drain, Local: pool.Options{Workers: 1}})
			p := remotePool(t, connect(t, s), "drain-"+name, pool.Options{Workers: 1})
			waitNodes(t, p, 1)
			f, err := pool.Submit(testCtx(t), p, sleep, time.Minute)
			require.NoError(t, err)
			require.Eventually(t, func() bool { n := p.Nodes(); return len(n) == 1 && n[0].Busy == 1 }, 10*time.Second, time.Millisecond,
				"the call runs on the node")
			stopped := time.Now()
			n.Stop()
			_, err = f.Wait()
			took := time.Since(stopped)
			require.ErrorIs(t, err, pool.ErrNodeLost)
			assert.Contains(t, err.Error(), "shut down under the task")
			assert.GreaterOrEqual(t, took, max(drain, 0), "the call had its drain")
			// No more than its drain: had the node waited for the task, the
			// call would have ended with the task's own answer, after its
			// minute, not with ErrNodeLost.
			require.NoError(t, n.Wait(t))
		})
	}
}

// A node that leaves with none of the pool's calls unsubscribes as soon
// as it has said so, before the pool's ping can confirm it: the server's
// "no responders" to that ping then means it left (NodeLeft), not that it
// was lost, and nothing counts in Stats.Crashed.
func TestIdleNodeThatLeavesIsNotLost(t *testing.T) {
	t.Parallel()
	s := startServer(t, embedded.Options{})
	n := serve(t, s, natsremote.ServeOptions{Pool: "idle-leaves", Local: pool.Options{Workers: 1}})
	gone := make(chan pool.WorkerEventKind, 1)
	p := remotePool(t, connect(t, s), "idle-leaves", pool.Options{Workers: 1, OnWorkerEvent: func(ev pool.WorkerEvent) {
		if ev.Kind == pool.NodeLeft || ev.Kind == pool.NodeLost {
			gone <- ev.Kind
		}
	}})
	waitNodes(t, p, 1)
	n.Stop()
	require.NoError(t, n.Wait(t))
	select {
	case kind := <-gone:
		assert.Equal(t, pool.NodeLeft, kind)
	case <-time.After(time.Minute):
		t.Fatal("the pool never saw the node go")
	}
	assert.Zero(t, p.Stats().Crashed)
	assert.Empty(t, p.Nodes())
}
