package natsremote_test

// The stop tests pause a node with SIGSTOP, a partition without a TCP
// reset, and read its state from /proc: Linux only.

import (
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/internal/testkit"
	"github.com/offloadgo/offload/natsremote/embedded"
	"github.com/offloadgo/offload/pool"
)

// tappedNode is a server with a tap on its wire, one node process named
// name with slots slots, and a Remote pool of as many workers that the
// node has joined.
func tappedNode(t *testing.T, name string, slots int) (*tap, *nodeProcess, *pool.Pool) {
	t.Helper()
	s := startServer(t, embedded.Options{Listen: true})
	w := wiretap(t, connect(t, s))
	a := startNode(t, s.ClientURL(), name, strconv.Itoa(slots))
	p := remotePool(t, connect(t, s), name, pool.Options{Workers: slots})
	waitNodes(t, p, 1)
	return w, a, p
}

// resumeNode resumes a stopped node process (SIGCONT) and returns how
// many messages the tap had seen before, for counting what came after.
func resumeNode(t *testing.T, w *tap, n *nodeProcess) int {
	t.Helper()
	seen := len(w.kinds(0, -1, ""))
	require.NoError(t, n.Cmd.Process.Signal(syscall.SIGCONT))
	return seen
}

// waitStopped waits until the node process is stopped (SIGSTOP), as
// /proc says.
func waitStopped(t *testing.T, n *nodeProcess) {
	t.Helper()
	require.Eventually(t, func() bool {
		state, ok := testkit.ProcState(n.Cmd.Process.Pid)
		return ok && state == 'T'
	}, 10*time.Second, time.Millisecond, "the node process stops")
}

// A node process stopped mid-task (SIGSTOP: a partition without a TCP
// reset) fails its task with ErrNodeLost; once it resumes (SIGCONT) it
// answers late, and the answer is dropped: the Future stays as it
// resolved. The node then serves again.
func TestStoppedNodeProcessAnswersLate(t *testing.T) {
	t.Parallel()
	w, a, p := tappedNode(t, "stopped", 1)

	// The task outlasts a heartbeat or two, so that a pong says it runs.
	run := 3 * testHeartbeat
	f, err := pool.Submit(testCtx(t), p, sleep, run)
	require.NoError(t, err)
	require.Eventually(t, func() bool { return p.Nodes()[0].Busy == 1 }, 10*time.Second, time.Millisecond,
		"the task runs on the node")
	require.NoError(t, a.Cmd.Process.Signal(syscall.SIGSTOP))
	stopped := time.Now()
	_, err = f.Wait()
	require.ErrorIs(t, err, pool.ErrNodeLost)
	t.Logf("the stopped node's task failed %v after SIGSTOP (heartbeat %v)", time.Since(stopped), testHeartbeat)
	time.Sleep(run) // the task's time is up while the node sleeps

	resumed := resumeNode(t, w, a)
	require.Eventually(t, func() bool {
		return w.count(resumed, "result", "_INBOX.")+w.count(resumed, "ended", "_INBOX.") == 1
	}, 10*time.Second, time.Millisecond, "the node answers late")

	waitNodes(t, p, 1) // it rejoins: its next advert, then its pong
	got, err := pool.Run(testCtx(t), p, pid, struct{}{})
	require.NoError(t, err, "the node is back")
	assert.Equal(t, a.Cmd.Process.Pid, got)
	st := p.Stats()
	assert.EqualValues(t, 1, st.Failed, "the late answer changed nothing: %+v", st)
	assert.EqualValues(t, 1, st.Completed, "%+v", st)
}

// Calls sent to a node that stops (SIGSTOP) before it reads them fail with
// ErrNodeLost, and when the node resumes it never starts them: each
// carries the latest time it may start, when its submitter gives up on the
// node, and the node answers "late" after that instead.
func TestLostCallsNeverStartLate(t *testing.T) {
	t.Parallel()
	w, a, p := tappedNode(t, "late-start", 3)

	require.NoError(t, a.Cmd.Process.Signal(syscall.SIGSTOP))
	waitStopped(t, a) // the signal is asynchronous: the node might read a call first
	var fs []*pool.Future[int]
	for _, tag := range []string{"late-1", "late-2"} {
		f, err := pool.Submit(testCtx(t), p, announce, announceIn{Tag: tag, D: time.Millisecond})
		require.NoError(t, err)
		fs = append(fs, f)
	}
	for _, f := range fs {
		_, err := f.Wait()
		require.ErrorIs(t, err, pool.ErrNodeLost, "sent to the stopped node, which never answered")
	}
	resumed := resumeNode(t, w, a)
	require.Eventually(t, func() bool { return w.count(resumed, "late", "_INBOX.") == 2 }, 10*time.Second, time.Millisecond,
		"the resumed node turns both calls away as late")
	waitNodes(t, p, 1)
	out, err := pool.Run(testCtx(t), p, announce, announceIn{Tag: "fresh", D: time.Millisecond})
	require.NoError(t, err)
	assert.Equal(t, 1, out)
	require.Eventually(t, func() bool { return strings.Contains(a.Output.String(), "nr.announce started fresh") },
		10*time.Second, time.Millisecond)
	assert.NotContains(t, a.Output.String(), "nr.announce started late", "a call its caller was told was lost never starts")
}
