package natsremote_test

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/internal/testkit"
	"github.com/offloadgo/offload/natsremote"
	"github.com/offloadgo/offload/natsremote/embedded"
	"github.com/offloadgo/offload/pool"
)

// nodeProcess is this test binary started as a worker node (pool.Main in
// TestMain serves, as OFFLOAD_NATS_URL says), connected over TCP loopback.
type nodeProcess struct {
	cmd    *exec.Cmd
	output *testkit.Buffer
}

// startNode starts a node process serving name on url with workers slots,
// and env (KEY=value) added to its environment; it is killed (if still
// alive) and reaped when the test ends.
func startNode(t *testing.T, url, name string, workers string, env ...string) *nodeProcess {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(),
		natsremote.EnvURL+"="+url,
		natsremote.EnvPool+"="+name,
		natsremote.EnvWorkers+"="+workers,
		natsremote.EnvHeartbeat+"="+testHeartbeat.String(),
	)
	cmd.Env = append(cmd.Env, env...)
	n := &nodeProcess{cmd: cmd, output: &testkit.Buffer{}}
	cmd.Stdout, cmd.Stderr = n.output, n.output
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("node process %d said:\n%s", cmd.Process.Pid, n.output)
		}
	})
	return n
}

// exit waits, at most within, for the node process to exit, and returns
// how it did.
func (n *nodeProcess) exit(t *testing.T, within time.Duration) *os.ProcessState {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = n.cmd.Wait()
	}()
	select {
	case <-done:
		return n.cmd.ProcessState
	case <-time.After(within):
		_ = n.cmd.Process.Kill()
		<-done
		t.Fatalf("the node process did not exit within %v", within)
		return nil
	}
}

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
	require.NoError(t, a.cmd.Process.Kill())
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
	assert.Equal(t, b.cmd.Process.Pid, got, "the survivor serves")
	assert.EqualValues(t, 1, p.Stats().Crashed)
}
