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

// waitIdle waits until every node p knows has advertised, since the call,
// all its slots free: the tasks that ran on them have ended there.
func waitIdle(t *testing.T, p *pool.Pool) {
	t.Helper()
	since := time.Now()
	require.Eventually(t, func() bool {
		nodes := p.Nodes()
		for _, n := range nodes {
			if n.AdvertAge > time.Since(since) || n.Free != n.Workers || n.Busy != 0 {
				return false
			}
		}
		return len(nodes) > 0
	}, 10*time.Second, 5*time.Millisecond, "every node's running count returns to zero: %+v", p.Nodes())
}

// When the caller's ctx ends, its call resolves at once with
// ErrTerminated and the ctx's error, and the task ends on its node: its
// ctx there ends (InProcess), or its worker process is killed after the
// grace (Subprocess). The node still answers the call, once, with a bare
// "ended": a node allowed one answer per request (NodePermissions) uses
// it up, and the server forgets the reply subject.
func TestCancelEndsTheTaskOnItsNode(t *testing.T) {
	t.Parallel()
	for _, iso := range []pool.Isolation{pool.InProcess, pool.Subprocess} {
		t.Run(iso.String(), func(t *testing.T) {
			t.Parallel()
			s := startServer(t, embedded.Options{})
			w := wiretap(t, connect(t, s))
			name := "cancel-" + iso.String()
			local := pool.Options{Workers: 1, Isolation: iso}
			if iso == pool.Subprocess {
				local.Subprocess.TerminateGrace = 50 * time.Millisecond
			}
			serve(t, s, natsremote.ServeOptions{Pool: name, Local: local})
			p := remotePool(t, connect(t, s), name, pool.Options{Workers: 1})
			waitNodes(t, p, 1)

			ctx, cancel := context.WithCancel(testCtx(t))
			f, err := pool.Submit(ctx, p, sleep, time.Minute)
			require.NoError(t, err)
			require.Eventually(t, func() bool { return p.Nodes()[0].InFlight == 1 }, 10*time.Second, time.Millisecond)
			cancel()
			select {
			case <-f.Done():
			case <-time.After(time.Second):
				t.Fatal("the Future did not resolve at once")
			}
			_, err = f.Wait()
			require.ErrorIs(t, err, pool.ErrTerminated)
			require.ErrorIs(t, err, context.Canceled)
			waitIdle(t, p)
			st := p.Stats()
			assert.EqualValues(t, 1, st.Canceled, "%+v", st)
			assert.Eventually(t, func() bool { return p.Stats().CanceledOnNode == 1 }, 10*time.Second, time.Millisecond,
				"the task was canceled on its node")
			assert.Zero(t, p.Stats().Terminated, "this pool killed no process of its own")
			assert.Eventually(t, func() bool { return w.count(0, "ended", natsremote.DefaultInboxPrefix+".") == 1 }, 10*time.Second, time.Millisecond,
				"the node answered the cancelled call")

			out, err := pool.Run(testCtx(t), p, add, [2]int{1, 2})
			require.NoError(t, err, "the node serves on")
			assert.Equal(t, 3, out)
		})
	}
}

// Closing the pool ends its calls on their nodes too.
func TestCloseEndsRemoteTasks(t *testing.T) {
	t.Parallel()
	s := startServer(t, embedded.Options{})
	serve(t, s, natsremote.ServeOptions{Pool: "close", Local: pool.Options{Workers: 2}})
	watcher := remotePool(t, connect(t, s), "close", pool.Options{Workers: 1})
	p := remotePool(t, connect(t, s), "close", pool.Options{Workers: 2})
	waitNodes(t, p, 1)
	var fs []*pool.Future[int]
	for range 3 {
		f, err := pool.Submit(testCtx(t), p, sleep, time.Minute)
		require.NoError(t, err)
		fs = append(fs, f)
	}
	require.Eventually(t, func() bool { return p.Nodes()[0].InFlight == 2 }, 10*time.Second, time.Millisecond)
	require.NoError(t, p.Close())
	for _, f := range fs {
		_, err := f.Wait()
		require.ErrorIs(t, err, pool.ErrClosed)
	}
	waitNodes(t, watcher, 1)
	waitIdle(t, watcher)
}
