package natsremote_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/natsremote/embedded"
	"github.com/offloadgo/offload/pool"
)

// A node process killed mid-task fails its task with ErrNodeLost within
// 3 heartbeats; the other node's task goes on, and the pool carries on
// with the node that is left.
func TestKilledNodeProcess(t *testing.T) {
	t.Parallel()
	s := startServer(t, embedded.Options{Listen: true})
	a := startNode(t, s.ClientURL(), "killed", "1")
	b := startNode(t, s.ClientURL(), "killed", "1")
	p := remotePool(t, connect(t, s), "killed", pool.Options{Workers: 2})
	waitNodes(t, p, 2)

	pids := map[int]bool{}
	for len(pids) < 2 { // both nodes serve
		pid, err := pool.Run(testCtx(t), p, pid, struct{}{})
		require.NoError(t, err)
		pids[pid] = true
	}
	ctx, cancel := context.WithCancel(testCtx(t))
	defer cancel()
	f1, err := pool.Submit(ctx, p, sleep, time.Minute)
	require.NoError(t, err)
	f2, err := pool.Submit(ctx, p, sleep, time.Minute)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		nodes := p.Nodes()
		return len(nodes) == 2 && nodes[0].Busy == 1 && nodes[1].Busy == 1
	}, 10*time.Second, time.Millisecond, "one task running on each node")

	killed := time.Now()
	require.NoError(t, a.Cmd.Process.Kill())
	var lost, running *pool.Future[int]
	select {
	case <-f1.Done():
		lost, running = f1, f2
	case <-f2.Done():
		lost, running = f2, f1
	case <-time.After(3*testHeartbeat + schedulingSlack):
		t.Fatal("the killed node's task did not fail within 3 heartbeats")
	}
	t.Logf("the killed node's task failed %v after SIGKILL (heartbeat %v)", time.Since(killed), testHeartbeat)
	_, err = lost.Wait()
	require.ErrorIs(t, err, pool.ErrNodeLost)
	select {
	case <-running.Done():
		t.Fatal("the other node's task ended too")
	default:
	}
	cancel()
	_, err = running.Wait()
	require.ErrorIs(t, err, pool.ErrTerminated)

	got, err := pool.Run(testCtx(t), p, pid, struct{}{})
	require.NoError(t, err)
	assert.Equal(t, b.Cmd.Process.Pid, got, "the survivor serves")
	assert.EqualValues(t, 1, p.Stats().Crashed)
}
