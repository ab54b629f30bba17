package natsremote_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/natsremote"
	"github.com/offloadgo/offload/natsremote/embedded"
	"github.com/offloadgo/offload/pool"
	"github.com/offloadgo/offload/transfer"
)

// holdStarted waits until a hold task of key has started n times in all.
func holdStarted(t *testing.T, key string) {
	t.Helper()
	select {
	case <-gateFor(key).started:
	case <-time.After(10 * time.Second):
		t.Fatalf("hold %q did not start", key)
	}
}

// A node that answers "full" sends the call to another node, and with
// every node full the call waits for room, then runs: it never turns into
// ErrQueueFull, and the wait counts as queue wait. The nodes advertise
// only when they must, and one pool pings them only when it must (an
// hour's heartbeat each), so that its view of a node goes stale while
// another pool fills it.
func TestFullNodeSendsElsewhereThenWaits(t *testing.T) {
	t.Parallel()
	k := keysFor("full")
	s := startServer(t, embedded.Options{})
	w := wiretap(t, connect(t, s))
	slow := natsremote.ServeOptions{Pool: "full", Heartbeat: time.Hour}
	slow.Local.Workers = 2
	serve(t, s, slow) // node A
	lateConn := connect(t, s)
	// late pings its nodes only each hour, too: it learns of A's calls
	// only from A itself.
	tr, err := natsremote.New(lateConn, natsremote.Options{Pool: "full", Heartbeat: time.Hour})
	require.NoError(t, err)
	late, err := pool.New(pool.Options{Workers: 2, MaxQueue: 4, Isolation: pool.Remote, Transport: tr, Logger: quiet})
	require.NoError(t, err)
	t.Cleanup(func() { _ = late.Close() })
	waitNodes(t, late, 1)
	filler := remotePool(t, connect(t, s), "full", pool.Options{Workers: 2})
	waitNodes(t, filler, 1)
	ctx := testCtx(t)
	var fill []*pool.Future[string]
	for _, key := range []string{k("a1"), k("a2")} {
		f, err := pool.Submit(ctx, filler, hold, key)
		require.NoError(t, err)
		holdStarted(t, key)
		fill = append(fill, f)
	}
	slow.Local.Workers = 1
	serve(t, s, slow) // node B
	waitNodes(t, late, 2)

	// late still sees A's two free slots, against B's one: it tries A.
	before := w.mark(t, lateConn)
	elsewhere, err := pool.Submit(ctx, late, hold, k("elsewhere"))
	require.NoError(t, err)
	holdStarted(t, k("elsewhere"))
	assert.Eventually(t, func() bool { return w.count(before, "full", "_INBOX.") == 1 }, 10*time.Second, time.Millisecond,
		"A answered full, and the call went to B")

	// Now both are full: one call waits for a slot, the next in the queue.
	waiting, err := pool.Submit(ctx, late, hold, k("waiting"))
	require.NoError(t, err)
	queued, err := pool.Submit(ctx, late, hold, k("queued"))
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		st := late.Stats()
		return st.Busy == 2 && st.Queued == 1
	}, 10*time.Second, time.Millisecond)
	time.Sleep(300 * time.Millisecond) // the wait the queued calls will have had, at least

	for _, key := range []string{k("a1"), k("a2"), k("elsewhere")} {
		close(gateFor(key).release)
	}
	for _, f := range append(fill, elsewhere) {
		_, err := f.Wait()
		require.NoError(t, err)
	}
	for _, key := range []string{k("waiting"), k("queued")} {
		holdStarted(t, key)
		close(gateFor(key).release)
	}
	for _, f := range []*pool.Future[string]{waiting, queued} {
		_, err := f.Wait()
		require.NoError(t, err)
	}
	for _, key := range []string{k("a1"), k("a2"), k("elsewhere"), k("waiting"), k("queued")} {
		assert.Equal(t, 1, gateFor(key).runs.Load(), "%s ran once", key)
	}
	st := late.Stats()
	assert.EqualValues(t, 3, st.Completed)
	assert.Zero(t, st.Rejected)
	assert.GreaterOrEqual(t, st.WaitTime.Max, 300*time.Millisecond, "the wait for a node's slot is queue wait: %+v", st)
	assert.Less(t, st.RunTime.P50, 300*time.Millisecond, "and not run time (only the call held on B ran that long): %+v", st)
}

// ErrQueueFull is decided by the pool: a rejected call publishes nothing.
func TestQueueFullPublishesNothing(t *testing.T) {
	t.Parallel()
	k := keysFor("queue-full")
	w, nc, p := tappedPool(t, "queue-full", 1, pool.Options{Workers: 1, MaxQueue: pool.NoQueue})
	ctx := testCtx(t)
	f, err := pool.Submit(ctx, p, hold, k("held"))
	require.NoError(t, err)
	holdStarted(t, k("held"))

	w.onlyHeartbeats(t, nc, func() {
		for range 10 {
			_, err = pool.Submit(ctx, p, hold, k("rejected"))
			require.ErrorIs(t, err, pool.ErrQueueFull)
		}
	})
	assert.EqualValues(t, 10, p.Stats().Rejected)
	assert.Zero(t, gateFor(k("rejected")).runs.Load())

	close(gateFor(k("held")).release)
	_, err = f.Wait()
	require.NoError(t, err)
}

// An input or output over the connection's maximum payload fails with
// ErrPayloadTooLarge before it is sent; a Buffer crosses by copy.
func TestPayloads(t *testing.T) {
	t.Parallel()
	const limit = 64 << 10
	s := startServer(t, embedded.Options{MaxPayload: limit})
	w := wiretap(t, connect(t, s))
	serve(t, s, natsremote.ServeOptions{Pool: "payloads", Local: pool.Options{Workers: 1}})
	nc := connect(t, s)
	p := remotePool(t, nc, "payloads", pool.Options{Workers: 1})
	waitNodes(t, p, 1)
	ctx := testCtx(t)

	from := w.mark(t, nc)
	_, err := pool.Submit(ctx, p, length, make([]byte, limit))
	require.ErrorIs(t, err, pool.ErrPayloadTooLarge, "refused at admission")
	n, err := pool.Run(ctx, p, length, make([]byte, limit-200))
	require.NoError(t, err, "what fits goes")
	assert.Equal(t, limit-200, n)
	to := w.mark(t, nc)
	assert.Equal(t, 1, countOf(w.kinds(from, to, "offload.payloads.node."), "call"), "only the call that fits was sent")

	_, err = pool.Run(ctx, p, bytesOut, limit)
	require.ErrorIs(t, err, pool.ErrPayloadTooLarge, "the node refuses to send an output over the limit")

	in := transfer.Move([]byte("buffer"))
	out, err := pool.Run(ctx, p, echoBuffer, in)
	require.NoError(t, err)
	assert.True(t, in.Detached(), "the caller's handle is detached, as for a move")
	assert.Equal(t, "echo: buffer", string(out.Bytes()))
	out.Release()

	// An error text or a panic value over the limit is cut to fit, and
	// said so: it is not dropped (which left the call lost).
	_, err = pool.Run(ctx, p, failLong, 2*limit)
	var re *pool.RemoteError
	require.ErrorAs(t, err, &re)
	assert.Contains(t, re.Message, "[truncated to fit the NATS maximum payload]")
	assert.Less(t, len(re.Message), limit)
	_, err = pool.Run(ctx, p, boomLong, 2*limit)
	var pe *pool.PanicError
	require.ErrorAs(t, err, &pe)
	assert.Contains(t, fmt.Sprint(pe.Value), "[truncated")
}

func countOf(kinds []string, kind string) int {
	n := 0
	for _, k := range kinds {
		if k == kind {
			n++
		}
	}
	return n
}

// A node that turned a call away as full says so as soon as a slot frees
// — when the task holding it returns, even after its caller gave up — not
// at its next heartbeat: the waiting call goes at once. The node and the
// pool both keep an hour's heartbeat, so the call could go only on that
// word, never on a periodic advert or ping.
func TestFreedSlotIsAdvertisedAtOnce(t *testing.T) {
	t.Parallel()
	s := startServer(t, embedded.Options{})
	serve(t, s, natsremote.ServeOptions{Pool: "freed", Heartbeat: time.Hour, Local: pool.Options{Workers: 1}})
	tr, err := natsremote.New(connect(t, s), natsremote.Options{Pool: "freed", Heartbeat: time.Hour})
	require.NoError(t, err)
	p, err := pool.New(pool.Options{Workers: 2, Isolation: pool.Remote, Transport: tr, Logger: quiet})
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Close() })
	waitNodes(t, p, 1)

	short, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	held, err := pool.Submit(short, p, stubborn, 300*time.Millisecond)
	require.NoError(t, err)
	require.Eventually(t, func() bool { return p.Nodes()[0].InFlight == 1 }, 10*time.Second, time.Millisecond)
	start := time.Now()
	out, err := pool.Run(testCtx(t), p, add, [2]int{1, 2})
	require.NoError(t, err, "sent once the held slot freed, not at an hour's heartbeat")
	assert.Equal(t, 3, out)
	t.Logf("the waiting call was answered after %v (the held task ran 300 ms)", time.Since(start))
	_, err = held.Wait()
	require.ErrorIs(t, err, pool.ErrTerminated)
}
