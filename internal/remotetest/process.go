package remotetest

import (
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/internal/testkit"
	"github.com/offloadgo/offload/natsremote"
)

// NodeProcess is this test binary started as a worker node: the binary's
// TestMain must call natsremote.Main first, which serves as
// OFFLOAD_NATS_URL and the other variables say.
type NodeProcess struct {
	Cmd    *exec.Cmd
	Output *testkit.Buffer // what the node said, on stdout and stderr
}

// StartNode starts a node process serving the pool named name on url
// with workers slots at h's heartbeat, env (KEY=value) added to its
// environment; it is killed (if still alive) and reaped when the test
// ends, and what it said is logged if the test failed.
func (h Harness) StartNode(t testing.TB, url, name, workers string, env ...string) *NodeProcess {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(),
		natsremote.EnvURL+"="+url,
		natsremote.EnvPool+"="+name,
		natsremote.EnvWorkers+"="+workers,
		natsremote.EnvHeartbeat+"="+h.Heartbeat.String(),
	)
	cmd.Env = append(cmd.Env, env...)
	n := &NodeProcess{Cmd: cmd, Output: &testkit.Buffer{}}
	cmd.Stdout, cmd.Stderr = n.Output, n.Output
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("node process %d said:\n%s", cmd.Process.Pid, n.Output)
		}
	})
	return n
}

// Exit waits, at most within, for the node process to exit, and returns
// how it did.
func (n *NodeProcess) Exit(t testing.TB, within time.Duration) *os.ProcessState {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = n.Cmd.Wait()
	}()
	select {
	case <-done:
		return n.Cmd.ProcessState
	case <-time.After(within):
		_ = n.Cmd.Process.Kill()
		<-done
		t.Fatalf("the node process did not exit within %v", within)
		return nil
	}
}
