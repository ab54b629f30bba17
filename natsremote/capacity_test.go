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

// A caller blocked in SubmitBlocking while no node offers room gets room
// as soon as a node joins with free slots, while the calls that filled
// the first node still run: no freed slot has to wake it.
func TestNodeJoiningWakesBlockedSubmitters(t *testing.T) {
	t.Parallel()
	k := keysFor("join-wakes")
	s, p := oneNodePool(t, "join-wakes", 1, pool.Options{Workers: 4, MaxQueue: pool.NoQueue})
	ctx := testCtx(t)

	first, err := pool.Submit(ctx, p, hold, k("first"))
	require.NoError(t, err)
	holdStarted(t, k("first"))
	assert.Equal(t, 1, p.Stats().MaxWorkers, "the node's one slot")
	entered := make(chan struct{})
	blocked := make(chan *pool.Future[string], 1)
	go func() {
		close(entered)
		f, err := pool.SubmitBlocking(ctx, p, hold, k("blocked"))
		assert.NoError(t, err)
		blocked <- f
	}()
	<-entered
	serve(t, s, natsremote.ServeOptions{Pool: "join-wakes", Local: pool.Options{Workers: 1}})

	var f *pool.Future[string]
	select {
	case f = <-blocked:
	case <-ctx.Done():
		t.Fatal("the blocked caller was not woken by the node that joined")
	}
	holdStarted(t, k("blocked"))
	assert.Equal(t, 2, p.Stats().Busy, "beside the first call, still running")
	assert.Equal(t, 2, p.Stats().MaxWorkers, "two nodes, a slot each")
	close(gateFor(k("first")).release)
	close(gateFor(k("blocked")).release)
	for _, f := range []*pool.Future[string]{first, f} {
		_, err := f.Wait()
		require.NoError(t, err)
	}
}

// A task that runs past SlowTaskAfter on a node is reported with the
// node's ID.
func TestSlowTaskNamesItsNode(t *testing.T) {
	t.Parallel()
	k := keysFor("slow-node")
	s := startServer(t, embedded.Options{})
	serve(t, s, natsremote.ServeOptions{Pool: "slow-node", Local: pool.Options{Workers: 1}})
	slow := make(chan pool.WorkerEvent, 10)
	p := remotePool(t, connect(t, s), "slow-node", pool.Options{Workers: 1, SlowTaskAfter: 100 * time.Millisecond,
		OnWorkerEvent: func(ev pool.WorkerEvent) {
			if ev.Kind == pool.WorkerSlowTask {
				slow <- ev
			}
		}})
	waitNodes(t, p, 1)
	ctx := testCtx(t)

	f, err := pool.Submit(ctx, p, hold, k("slow"))
	require.NoError(t, err)
	holdStarted(t, k("slow"))
	var ev pool.WorkerEvent
	select {
	case ev = <-slow:
	case <-ctx.Done():
		t.Fatal("no WorkerSlowTask event")
	}
	assert.Equal(t, "nr.hold", ev.Task)
	assert.Equal(t, p.Nodes()[0].ID, ev.Node, "the node it runs on")
	assert.GreaterOrEqual(t, ev.Running, 100*time.Millisecond)
	assert.Equal(t, uint64(1), p.Stats().Slow)
	close(gateFor(k("slow")).release)
	_, err = f.Wait()
	require.NoError(t, err)
}
