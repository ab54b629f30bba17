package natsremote_test

import (
	"context"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/internal/testkit"
	"github.com/offloadgo/offload/natsremote"
	"github.com/offloadgo/offload/natsremote/embedded"
	"github.com/offloadgo/offload/pool"
)

// An OnWorkerEvent hook may call back into the pool: a hook that lists the
// nodes as one joins and leaves sees them, and the pool goes on working.
// (The hook runs outside every lock of the pool and the transport.)
func TestHookMayCallThePool(t *testing.T) {
	t.Parallel()
	s := startServer(t, embedded.Options{})
	var p atomic.Pointer[pool.Pool]
	var events atomic.Int32
	var listed atomic.Int32
	hook := func(ev pool.WorkerEvent) {
		if q := p.Load(); q != nil {
			listed.Store(int32(len(q.Nodes())))
		}
		events.Add(1)
	}
	tr, err := natsremote.New(connect(t, s), natsremote.Options{Pool: "hooked", Heartbeat: testHeartbeat})
	require.NoError(t, err)
	q, err := pool.New(pool.Options{Workers: 1, Isolation: pool.Remote, Transport: tr, Logger: quiet, OnWorkerEvent: hook})
	require.NoError(t, err)
	t.Cleanup(func() { _ = q.Close() })
	p.Store(q)

	n := serve(t, s, natsremote.ServeOptions{Pool: "hooked", Local: pool.Options{Workers: 1}})
	require.Eventually(t, func() bool { return events.Load() == 1 }, 10*time.Second, time.Millisecond, "the join reaches the hook")
	assert.EqualValues(t, 1, listed.Load(), "the hook listed the node that joined")
	testkit.Within(t, 10*time.Second, "Run after the hook", func() {
		out, err := pool.Run(testCtx(t), q, add, [2]int{1, 2})
		assert.NoError(t, err)
		assert.Equal(t, 3, out)
	})
	n.Stop()
	require.NoError(t, n.Wait(t))
	require.Eventually(t, func() bool { return events.Load() == 2 }, 10*time.Second, time.Millisecond, "the leave reaches the hook")
	assert.Zero(t, listed.Load(), "the node that left is no longer listed")
}

// blockingHandler is a slog handler whose Handle blocks until release is
// closed: a logger that has stalled.
type blockingHandler struct {
	slog.Handler
	release chan struct{}
	blocked atomic.Int32
}

func (h *blockingHandler) Handle(ctx context.Context, r slog.Record) error {
	h.blocked.Add(1)
	<-h.release
	return nil
}

func (h *blockingHandler) Enabled(context.Context, slog.Level) bool { return true }

// A Logger that stalls delays only the log: calls still go out and their
// answers still come back.
func TestStalledLoggerStallsNothingElse(t *testing.T) {
	t.Parallel()
	s := startServer(t, embedded.Options{})
	h := &blockingHandler{Handler: slog.DiscardHandler, release: make(chan struct{})}
	defer close(h.release)
	p := remotePool(t, connect(t, s), "stalled-log", pool.Options{Workers: 1, Logger: slog.New(h)})
	serve(t, s, natsremote.ServeOptions{Pool: "stalled-log", Local: pool.Options{Workers: 1}})
	require.Eventually(t, func() bool { return h.blocked.Load() > 0 }, 10*time.Second, time.Millisecond,
		"the node's join is being logged, and the logger is stuck")
	testkit.Within(t, 10*time.Second, "Runs while the logger is stuck", func() {
		for i := range 10 {
			out, err := pool.Run(testCtx(t), p, add, [2]int{i, i})
			assert.NoError(t, err)
			assert.Equal(t, 2*i, out)
		}
	})
}
