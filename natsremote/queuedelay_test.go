package natsremote_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/natsremote"
	"github.com/offloadgo/offload/natsremote/embedded"
	"github.com/offloadgo/offload/pool"
)

// QueueDelay bounds a Remote task's wait for a node's free slot as it
// bounds its wait in the queue: a task no node has room for fails with
// ErrQueueFull once its allowance is spent, is sent nowhere, and counts
// as Canceled, not as a run; with room again, tasks run.
func TestQueueDelayBoundsTheWaitForANode(t *testing.T) {
	t.Parallel()
	k := keysFor("qd")
	qd := pool.QueueDelay{Target: 50 * time.Millisecond, Interval: 200 * time.Millisecond}
	p, held := fullNode(t, "qd", pool.Options{Workers: 2, QueueDelay: qd}, k("held"))
	ctx := testCtx(t)

	// Handed to the idle worker (the queue was empty, so not standing):
	// it may wait the Interval for the node's one slot, then no more.
	start := time.Now()
	_, err := pool.Run(ctx, p, hold, k("late"))
	waited := time.Since(start)
	require.ErrorIs(t, err, pool.ErrQueueFull)
	assert.Contains(t, err.Error(), "no worker node had a free slot")
	assert.GreaterOrEqual(t, waited, qd.Interval)
	assert.Less(t, waited, 10*time.Second, "the ctx allowed a minute")
	assert.Zero(t, gateFor(k("late")).runs.Load(), "sent nowhere")
	st := p.Stats()
	assert.Equal(t, uint64(1), st.Canceled)
	assert.Zero(t, st.Failed)
	assert.Zero(t, st.RunTime.Count, "no task has run yet: the held one still runs")

	close(gateFor(k("held")).release)
	_, err = held.Wait()
	require.NoError(t, err)
	out, err := pool.Run(ctx, p, add, [2]int{40, 2})
	require.NoError(t, err)
	assert.Equal(t, 42, out)
	st = p.Stats()
	assert.Equal(t, uint64(2), st.Completed)
	assert.Equal(t, uint64(1), st.Canceled)
	assert.Equal(t, uint64(1), st.Tasks["nr.hold"].Completed)
	assert.Zero(t, st.Tasks["nr.hold"].Canceled, "the dropped task never ran")
}

// A task whose caller gives up while it waits for a node's free slot was
// sent nowhere: its time counts as waiting, not as run time.
func TestWaitForANodeIsNotRunTime(t *testing.T) {
	t.Parallel()
	k := keysFor("wait")
	p, held := fullNode(t, "wait", pool.Options{Workers: 2}, k("held"))

	const patience = 300 * time.Millisecond
	ctx, cancel := context.WithTimeout(testCtx(t), patience)
	defer cancel()
	_, err := pool.Run(ctx, p, hold, k("impatient"))
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Eventually(t, func() bool { return p.Stats().RunTime.Count == 1 }, 10*time.Second, time.Millisecond,
		"its worker counts it once it is back")
	st := p.Stats()
	assert.GreaterOrEqual(t, st.WaitTime.Max, patience*9/10)
	assert.Less(t, st.RunTime.Max, patience/3, "it never ran")
	assert.Zero(t, gateFor(k("impatient")).runs.Load())
	close(gateFor(k("held")).release)
	_, err = held.Wait()
	require.NoError(t, err)
}

// fullNode starts a node of one slot serving the pool named name, makes a
// Remote pool with o that sees it, and fills the slot with a hold task
// under key, which runs until its gate is released.
func fullNode(t *testing.T, name string, o pool.Options, key string) (*pool.Pool, *pool.Future[string]) {
	t.Helper()
	s := startServer(t, embedded.Options{})
	one := natsremote.ServeOptions{Pool: name}
	one.Local.Workers = 1
	serve(t, s, one)
	p := remotePool(t, connect(t, s), name, o)
	waitNodes(t, p, 1)
	held, err := pool.Submit(testCtx(t), p, hold, key)
	require.NoError(t, err)
	holdStarted(t, key)
	return p, held
}
