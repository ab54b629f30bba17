package natsremote_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/natsremote"
	"github.com/offloadgo/offload/natsremote/embedded"
	"github.com/offloadgo/offload/pool"
)

// A task's result, error and panic reach the caller as they do from a
// worker process, from an InProcess node and from a Subprocess one.
func TestOutcomes(t *testing.T) {
	t.Parallel()
	for _, iso := range []pool.Isolation{pool.InProcess, pool.Subprocess} {
		t.Run(iso.String(), func(t *testing.T) {
			t.Parallel()
			s := startServer(t, embedded.Options{})
			name := "outcomes-" + iso.String()
			serve(t, s, natsremote.ServeOptions{Pool: name, Local: pool.Options{Workers: 1, Isolation: iso}})
			p := remotePool(t, connect(t, s), name, pool.Options{Workers: 1})
			waitNodes(t, p, 1)
			ctx := testCtx(t)

			out, err := pool.Run(ctx, p, add, [2]int{40, 2})
			require.NoError(t, err)
			assert.Equal(t, 42, out)

			_, err = pool.Run(ctx, p, fail, "it failed")
			var re *pool.RemoteError
			require.ErrorAs(t, err, &re)
			assert.Equal(t, "it failed", re.Message)
			assert.Equal(t, "nr.fail", re.Task)

			assert.False(t, re.Permanent())
			_, err = pool.Run(ctx, p, failPermanently, "not worth retrying")
			require.ErrorAs(t, err, &re)
			assert.Equal(t, "not worth retrying", re.Message)
			assert.True(t, re.Permanent(), "the mark crosses the node (and its worker process)")

			_, err = pool.Run(ctx, p, boom, "it panicked")
			var pe *pool.PanicError
			require.ErrorAs(t, err, &pe)
			assert.Equal(t, "it panicked", pe.Value)
			assert.Contains(t, string(pe.Stack), "natsremote_test")

			st := p.Stats()
			assert.EqualValues(t, 1, st.Completed, "%+v", st)
			assert.EqualValues(t, 3, st.Failed, "%+v", st)
			nodes := p.Nodes()
			require.Len(t, nodes, 1)
			assert.Equal(t, 1, nodes[0].Workers)
			assert.Zero(t, nodes[0].InFlight)
			assert.Less(t, nodes[0].AdvertAge, time.Minute)
		})
	}
}

// With no live node a call fails fast, with an error matching
// ErrQueueFull (a 503) that says why: within a heartbeat while the pool is
// new, at once after; Load reports what the live nodes offer, so Shed
// answers 503 before the handler runs, and follows nodes as they join and
// leave.
func TestNoNodeFailsFast(t *testing.T) {
	t.Parallel()
	s := startServer(t, embedded.Options{})
	p := remotePool(t, connect(t, s), "nobody", pool.Options{Workers: 2})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	start := time.Now()
	_, err := pool.Run(ctx, p, add, [2]int{1, 1})
	took := time.Since(start)
	require.ErrorIs(t, err, pool.ErrQueueFull)
	assert.Contains(t, err.Error(), "no worker node is available")
	assert.Less(t, took, testHeartbeat+schedulingSlack, "about a heartbeat, not the ctx's 10 s")
	t.Logf("the first call, on a new pool, failed after %v", took)

	require.Eventually(t, func() bool { l := p.Load(); return l.Workers == 0 && l.Capacity == 0 },
		10*time.Second, time.Millisecond, "no live node, no capacity: %+v", p.Load())
	start = time.Now()
	_, err = pool.Run(ctx, p, add, [2]int{1, 1})
	require.ErrorIs(t, err, pool.ErrQueueFull)
	assert.Contains(t, err.Error(), "no worker node is available")
	_, err = pool.SubmitBlocking(ctx, p, add, [2]int{1, 1})
	require.ErrorIs(t, err, pool.ErrQueueFull, "SubmitBlocking does not wait for a node that may never come")
	t.Logf("on a settled pool, in %v", time.Since(start))
	assert.EqualValues(t, 2, p.Stats().Rejected, "refused at admission: %+v", p.Stats())

	var ran atomic.Bool
	srv := httptest.NewServer(pool.Shed(p, pool.ShedOptions{})(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { ran.Store(true) })))
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	assert.NotEmpty(t, resp.Header.Get("Retry-After"))
	assert.False(t, ran.Load(), "shed before the handler runs")

	n := serve(t, s, natsremote.ServeOptions{Pool: "nobody", Local: pool.Options{Workers: 1}})
	require.Eventually(t, func() bool { l := p.Load(); return l.Workers == 1 && l.Capacity == 2 },
		10*time.Second, time.Millisecond, "one node of one slot: one worker, and its auto queue: %+v", p.Load())
	out, err := pool.Run(ctx, p, add, [2]int{1, 1})
	require.NoError(t, err)
	assert.Equal(t, 2, out)
	resp, err = srv.Client().Get(srv.URL)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)

	n.Stop()
	require.NoError(t, n.Wait(t))
	require.Eventually(t, func() bool { return p.Load().Capacity == 0 }, 10*time.Second, time.Millisecond,
		"the node left: %+v", p.Load())
	_, err = pool.Run(ctx, p, add, [2]int{1, 1})
	require.ErrorIs(t, err, pool.ErrQueueFull)
}

// A node joins late: calls queued before it run on it.
func TestNodeJoinsLate(t *testing.T) {
	t.Parallel()
	s := startServer(t, embedded.Options{})
	p := remotePool(t, connect(t, s), "late-node", pool.Options{Workers: 2})
	ctx := testCtx(t)
	var fs []*pool.Future[int]
	for i := range 5 {
		f, err := pool.Submit(ctx, p, add, [2]int{i, i})
		require.NoError(t, err)
		fs = append(fs, f)
	}
	serve(t, s, natsremote.ServeOptions{Pool: "late-node", Local: pool.Options{Workers: 2}})
	for i, f := range fs {
		out, err := f.Wait()
		require.NoError(t, err)
		assert.Equal(t, 2*i, out)
	}
}

// Bad options are refused by New and Serve.
func TestOptions(t *testing.T) {
	t.Parallel()
	s := startServer(t, embedded.Options{})
	nc := connect(t, s)
	for _, o := range []natsremote.Options{{}, {Pool: "a.b"}, {Pool: "a b"}, {Pool: "p", Heartbeat: time.Millisecond}} {
		_, err := natsremote.New(nc, o)
		assert.Error(t, err, "%+v", o)
	}
	for _, perName := range []int{-1, 1, 1025} {
		_, err := natsremote.New(nc, natsremote.Options{Pool: "p", MaxNodesPerName: perName})
		assert.ErrorContains(t, err, "natsremote: MaxNodesPerName is", "%d", perName)
	}
	_, err := natsremote.New(nil, natsremote.Options{Pool: "p"})
	assert.Error(t, err)
	for _, o := range []natsremote.ServeOptions{
		{},
		{Pool: "p", Local: pool.Options{MaxQueue: 4}},
		{Pool: "p", Local: pool.Options{Isolation: pool.Remote}},
		{Pool: "p", Drain: -time.Second}, // NoDrain is the one negative Drain
	} {
		assert.Error(t, natsremote.Serve(context.Background(), nc, o), "%+v", o)
	}
}

// A Transport is enough to make a Remote pool: Isolation may be left zero,
// but a Subprocess pool with a Transport is refused.
func TestTransportMakesThePoolRemote(t *testing.T) {
	t.Parallel()
	s := startServer(t, embedded.Options{})
	tr, err := natsremote.New(connect(t, s), natsremote.Options{Pool: "implied", Heartbeat: testHeartbeat})
	require.NoError(t, err)
	p, err := pool.New(pool.Options{Workers: 1, Transport: tr, Logger: quiet})
	require.NoError(t, err)
	defer p.Close()
	assert.Equal(t, pool.Remote, p.Options().Isolation)
	serve(t, s, natsremote.ServeOptions{Pool: "implied", Local: pool.Options{Workers: 1}})
	waitNodes(t, p, 1)
	out, err := pool.Run(testCtx(t), p, add, [2]int{2, 2})
	require.NoError(t, err)
	assert.Equal(t, 4, out)
	_, err = pool.New(pool.Options{Isolation: pool.Subprocess, Transport: tr})
	assert.ErrorContains(t, err, "Transport")
}

// A closure can't cross to a node: RunFunc on a Remote pool fails at once,
// saying to Register the task, and publishes nothing.
func TestRunFuncRefusedOnRemotePool(t *testing.T) {
	t.Parallel()
	s := startServer(t, embedded.Options{})
	nc := connect(t, s)
	w := wiretap(t, connect(t, s))
	serve(t, s, natsremote.ServeOptions{Pool: "closures", Local: pool.Options{Workers: 1}})
	p := remotePool(t, nc, "closures", pool.Options{Workers: 1})
	waitNodes(t, p, 1)
	from := w.mark(t, nc)
	_, err := pool.RunFunc(testCtx(t), p, func(context.Context) (int, error) { return 1, nil })
	require.Error(t, err)
	assert.Contains(t, err.Error(), "pool.Register")
	to := w.mark(t, nc)
	assert.Zero(t, countOf(w.kinds(from, to, "offload.closures.node."), "call"), "nothing was sent")
}

// permanentErr is an error a task marks as not worth retrying, as
// natsjobs.Permanent does: by its method.
type permanentErr string

func (e permanentErr) Error() string   { return string(e) }
func (e permanentErr) Permanent() bool { return true }

var failPermanently = pool.Register("nr.failPermanently", func(_ context.Context, msg string) (struct{}, error) {
	return struct{}{}, permanentErr(msg)
})
