package natsremote_test

import (
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/internal/testkit"
	"github.com/offloadgo/offload/natsremote"
	"github.com/offloadgo/offload/natsremote/embedded"
	"github.com/offloadgo/offload/pool"
)

const schedulingSlack = natsremote.SchedulingSlack

// A node whose connection closes mid-task fails the task it ran with
// ErrNodeLost within 3 heartbeats, and never runs it again; the work
// still queued runs on the node that is left, each task once.
func TestLostNodeFailsItsCallsOthersRunOnSurvivors(t *testing.T) {
	t.Parallel()
	s := startServer(t, embedded.Options{})
	a := serve(t, s, natsremote.ServeOptions{Pool: "lost", Name: "a", Local: pool.Options{Workers: 1}})
	serve(t, s, natsremote.ServeOptions{Pool: "lost", Name: "b", Local: pool.Options{Workers: 1}})
	p := remotePool(t, connect(t, s), "lost", pool.Options{Workers: 2, MaxQueue: 8})
	waitNodes(t, p, 2)
	ctx := testCtx(t)
	k := keysFor("lost")
	keys := make([]string, 6)
	futures := make([]*pool.Future[string], len(keys))
	for i := range keys {
		keys[i] = k(fmt.Sprint(i))
		var err error
		futures[i], err = pool.Submit(ctx, p, hold, keys[i])
		require.NoError(t, err)
	}
	holdStarted(t, keys[0])
	holdStarted(t, keys[1])
	require.Eventually(t, func() bool {
		nodes := p.Nodes()
		return len(nodes) == 2 && nodes[0].InFlight == 1 && nodes[1].InFlight == 1
	}, 10*time.Second, time.Millisecond, "one call on each node")

	closed := time.Now()
	a.NC.Close()
	var lost int
	select {
	case <-futures[0].Done():
	case <-futures[1].Done():
		lost = 1
	case <-time.After(3*testHeartbeat + schedulingSlack):
		t.Fatalf("no call failed within 3 heartbeats of its node's end")
	}
	took := time.Since(closed)
	t.Logf("the lost node's call failed %v after its connection closed (heartbeat %v)", took, testHeartbeat)
	_, err := futures[lost].Wait()
	require.ErrorIs(t, err, pool.ErrNodeLost)
	require.ErrorIs(t, err, pool.ErrWorkerCrashed)
	require.Eventually(t, func() bool { return len(p.Nodes()) == 1 }, 10*time.Second, time.Millisecond)

	for i, key := range keys {
		if i != lost {
			close(gateFor(key).release)
		}
	}
	for i, f := range futures {
		if i != lost {
			out, err := f.Wait()
			require.NoError(t, err)
			assert.Equal(t, keys[i], out)
		}
	}
	for _, key := range keys {
		assert.Equal(t, 1, gateFor(key).runs.Load(), "%s ran once", key)
	}
	st := p.Stats()
	assert.EqualValues(t, 5, st.Completed, "%+v", st)
	assert.EqualValues(t, 1, st.Failed, "%+v", st)
	assert.EqualValues(t, 1, st.Crashed, "the node's loss: %+v", st)
	require.Error(t, a.Wait(t), "Serve ends when its connection closes")
}

// A node ends the calls of a submitter that vanished (its connection
// closed, or it crashed) once their pings stop, within 3 heartbeats.
func TestVanishedSubmitterEndsItsTasks(t *testing.T) {
	t.Parallel()
	s := startServer(t, embedded.Options{})
	serve(t, s, natsremote.ServeOptions{Pool: "vanished", Local: pool.Options{Workers: 1}})
	observer := remotePool(t, connect(t, s), "vanished", pool.Options{Workers: 1})
	nc := connect(t, s)
	p := remotePool(t, nc, "vanished", pool.Options{Workers: 1})
	waitNodes(t, p, 1)
	key := keysFor("vanished")("held")
	f, err := pool.Submit(testCtx(t), p, hold, key)
	require.NoError(t, err)
	holdStarted(t, key)
	nc.Close() // the submitter is gone, without a word
	waitIdle(t, observer)
	assert.Equal(t, 1, gateFor(key).runs.Load())
	_, err = f.Wait()
	require.ErrorIs(t, err, pool.ErrNodeLost, "from where the submitter sits, the node went silent")
}

// A node whose connection is gone is known gone from NATS's "no
// responders" answer to its next ping, not from its silence: its calls
// fail with ErrNodeLost that says so, and nothing is logged as corrupt.
func TestVanishedNodeIsGone(t *testing.T) {
	t.Parallel()
	s := startServer(t, embedded.Options{})
	var log testkit.Buffer
	p := remotePool(t, connect(t, s), "vanish", pool.Options{Workers: 1, Logger: slog.New(slog.NewTextHandler(&log, nil))})
	n := serve(t, s, natsremote.ServeOptions{Pool: "vanish", Local: pool.Options{Workers: 1}})
	waitNodes(t, p, 1)
	id := p.Nodes()[0].ID
	key := fmt.Sprintf("vanish-%d", time.Now().UnixNano())
	f, err := pool.Submit(testCtx(t), p, hold, key)
	require.NoError(t, err)
	holdStarted(t, key)
	n.NC.Close()
	gone := time.Now()
	_, err = f.Wait()
	require.ErrorIs(t, err, pool.ErrNodeLost)
	assert.Contains(t, err.Error(), "gone: nobody subscribes to its subject")
	t.Logf("the call failed %v after the node's connection closed (heartbeat %v): %v", time.Since(gone), testHeartbeat, err)
	lost := `level=WARN msg="pool: node ` + id + ` lost"`
	require.Eventually(t, func() bool { return strings.Contains(log.String(), lost) }, 10*time.Second, time.Millisecond,
		"the loss is logged, by name (after the call failed: logs go out after the lock)")
	assert.Contains(t, log.String(), `why="gone: nobody subscribes to its subject, with 1 calls in flight"`)
	assert.Contains(t, log.String(), `msg="pool: node `+id+` joined"`)
	assert.NotContains(t, log.String(), "corrupt")
}
