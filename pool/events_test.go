package pool_test

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/cancel"
	"github.com/offloadgo/offload/pool"
)

// eventLog collects a pool's WorkerEvents through OnWorkerEvent, and its
// log records by level.
type eventLog struct {
	mu     sync.Mutex
	events []pool.WorkerEvent
	logs   logCapture
}

func (l *eventLog) add(ev pool.WorkerEvent) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, ev)
}

// wait waits for an event of kind and returns the first one.
func (l *eventLog) wait(t *testing.T, kind pool.WorkerEventKind) pool.WorkerEvent {
	t.Helper()
	var got pool.WorkerEvent
	require.Eventually(t, func() bool {
		l.mu.Lock()
		defer l.mu.Unlock()
		for _, ev := range l.events {
			if ev.Kind == kind {
				got = ev
				return true
			}
		}
		return false
	}, 20*time.Second, time.Millisecond, "no %v event", kind)
	return got
}

// eventPool is a Subprocess pool whose worker events land in the returned
// log, logged at Debug and up.
func eventPool(t *testing.T, o pool.Options) (*pool.Pool, *eventLog) {
	t.Helper()
	var l eventLog
	o.Isolation = pool.Subprocess
	o.OnWorkerEvent = l.add
	o.Logger = slog.New(slog.NewTextHandler(&l.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	return newPool(t, o), &l
}

// Each cause of a worker process's end is reported once, with what it
// takes to act on it, and logged at its level.
func TestWorkerEvents(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	t.Run("started, recycled, replaced", func(t *testing.T) {
		t.Parallel()
		p, l := eventPool(t, pool.Options{Workers: 1, Subprocess: pool.SubprocessOptions{MaxTasksPerWorker: 1}})
		pid, err := pool.Run(ctx, p, procPID, struct{}{})
		require.NoError(t, err)
		first := l.wait(t, pool.WorkerStarted)
		assert.Equal(t, pid, first.PID)
		assert.Equal(t, pool.WorkerEventKind(0), first.Replacing, "a first start replaces nothing")
		assert.Positive(t, first.Took)
		rec := l.wait(t, pool.WorkerRecycled)
		assert.Equal(t, pid, rec.PID)
		_, err = pool.Run(ctx, p, procPID, struct{}{})
		require.NoError(t, err)
		require.Eventually(t, func() bool {
			l.mu.Lock()
			defer l.mu.Unlock()
			for _, ev := range l.events {
				if ev.Kind == pool.WorkerStarted && ev.Replacing == pool.WorkerRecycled {
					return true
				}
			}
			return false
		}, 20*time.Second, time.Millisecond, "the replacement says what it replaces")
		assert.EqualValues(t, 2, p.Stats().Recycled)
		assert.Contains(t, l.logs.String(), `level=DEBUG msg="pool: worker process started"`)
		assert.Contains(t, l.logs.String(), `level=INFO msg="pool: worker process recycled"`)
	})
	t.Run("terminated", func(t *testing.T) {
		t.Parallel()
		p, l := eventPool(t, pool.Options{Workers: 1})
		c, cancelCall := context.WithCancel(ctx)
		f, err := pool.Submit(c, p, procBlock, "events")
		require.NoError(t, err)
		l.wait(t, pool.WorkerStarted)
		// Running in the process, not only taken by a worker: a call
		// cancelled before it is sent is not terminated (and no event).
		l.logs.waitLog(t, "proc.block events started")
		cancelCall()
		_, err = f.Wait()
		require.ErrorIs(t, err, context.Canceled)
		ev := l.wait(t, pool.WorkerTerminated)
		assert.NotZero(t, ev.PID)
		assert.Contains(t, l.logs.String(), `level=INFO msg="pool: worker process terminated"`)
	})
	t.Run("crashed", func(t *testing.T) {
		t.Parallel()
		p, l := eventPool(t, pool.Options{Workers: 1})
		_, err := pool.Run(ctx, p, procCrash, "exit3")
		require.ErrorIs(t, err, pool.ErrWorkerCrashed)
		ev := l.wait(t, pool.WorkerCrashed)
		require.NotNil(t, ev.Exit)
		assert.Equal(t, 3, ev.Exit.Code)
		assert.Contains(t, l.logs.String(), `level=WARN msg="pool: worker process crashed"`)
		assert.Contains(t, l.logs.String(), "code=3")
	})
	t.Run("memory limit", func(t *testing.T) {
		t.Parallel()
		p, l := eventPool(t, pool.Options{Workers: 1, Subprocess: pool.SubprocessOptions{MemoryLimit: 96 << 20}})
		_, err := pool.Run(ctx, p, procCrash, "alloc")
		require.ErrorIs(t, err, pool.ErrWorkerCrashed)
		ev := l.wait(t, pool.WorkerCrashed)
		require.NotNil(t, ev.Exit)
		assert.Equal(t, cancel.KilledByMemoryLimit, ev.Exit.Killed)
		assert.Contains(t, l.logs.String(), `killed="memory limit"`)
	})
	t.Run("retired", func(t *testing.T) {
		t.Parallel()
		p, l := eventPool(t, pool.Options{Workers: 1, Subprocess: pool.SubprocessOptions{MaxPayload: 4096}})
		_, err := pool.Run(ctx, p, bigBundle, 5000) // lends a Buffer for a reply it can't send
		require.ErrorIs(t, err, pool.ErrPayloadTooLarge)
		l.wait(t, pool.WorkerRetired)
		assert.Contains(t, l.logs.String(), `level=WARN msg="pool: worker process retired"`)
	})
	t.Run("start failed", func(t *testing.T) {
		t.Parallel()
		p, l := eventPool(t, pool.Options{Workers: 1, Subprocess: pool.SubprocessOptions{StartTimeout: time.Nanosecond}})
		_, err := pool.Run(ctx, p, procPID, struct{}{})
		require.ErrorIs(t, err, pool.ErrWorkerStartFailed)
		ev := l.wait(t, pool.WorkerStartFailed)
		require.Error(t, ev.Err)
		assert.True(t, strings.Contains(ev.Err.Error(), "hello"), "%v", ev.Err)
		assert.Contains(t, l.logs.String(), `level=ERROR msg="pool: worker process start failed"`)
	})
}
