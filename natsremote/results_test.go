package natsremote_test

import (
	"context"
	"errors"
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

			_, err = pool.Run(ctx, p, boom, "it panicked")
			var pe *pool.PanicError
			require.ErrorAs(t, err, &pe)
			assert.Equal(t, "it panicked", pe.Value)
			assert.Contains(t, string(pe.Stack), "natsremote_test")

			st := p.Stats()
			assert.EqualValues(t, 1, st.Completed, "%+v", st)
			assert.EqualValues(t, 2, st.Failed, "%+v", st)
			nodes := p.Nodes()
			require.Len(t, nodes, 1)
			assert.Equal(t, 1, nodes[0].Workers)
			assert.Zero(t, nodes[0].InFlight)
			assert.Less(t, nodes[0].AdvertAge, time.Minute)
		})
	}
}

// Without any node, a call waits for one until its ctx ends, and gets
// the plain ctx error: it was never sent.
func TestNoNodeWaitsForCtx(t *testing.T) {
	t.Parallel()
	s := startServer(t, embedded.Options{})
	p := remotePool(t, connect(t, s), "nobody", pool.Options{Workers: 1})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := pool.Run(ctx, p, add, [2]int{1, 1})
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.False(t, errors.Is(err, pool.ErrTerminated), "never sent: %v", err)
	assert.EqualValues(t, 1, p.Stats().Canceled)
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
	_, err := natsremote.New(nil, natsremote.Options{Pool: "p"})
	assert.Error(t, err)
	for _, o := range []natsremote.ServeOptions{
		{},
		{Pool: "p", Local: pool.Options{MaxQueue: 4}},
		{Pool: "p", Local: pool.Options{Isolation: pool.Remote}},
		{Pool: "p", Drain: -1},
	} {
		assert.Error(t, natsremote.Serve(context.Background(), nc, o), "%+v", o)
	}
}
