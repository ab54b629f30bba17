package pool_test

import (
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/pool"
)

// A worker that cannot start costs a few process starts, not one per
// call: of calls submitted back to back, those that find the last start
// failed fail at once with its error, saying so. Once the program is
// fixed, RecycleWorkers puts it in service at once, backoff or not.
func TestSubprocessStartBackoff(t *testing.T) {
	t.Setenv(envForgetMain, "exit") // the workers' environment: not parallel
	const calls = 200
	var startFailed atomic.Int64
	p, _ := newProcPool(t, pool.Options{
		Workers:  2,
		MaxQueue: calls,
		OnWorkerEvent: func(ev pool.WorkerEvent) {
			if ev.Kind == pool.WorkerStartFailed {
				startFailed.Add(1)
			}
		},
	})
	ctx := testCtx(t)
	begin := time.Now()
	futures := make([]*pool.Future[int], 0, calls)
	for range calls {
		f, err := pool.Submit(ctx, p, procPID, struct{}{})
		require.NoError(t, err)
		futures = append(futures, f)
	}
	refused := 0
	for _, f := range futures {
		_, err := f.Wait()
		require.ErrorIs(t, err, pool.ErrWorkerStartFailed)
		require.ErrorContains(t, err, "exited with status 1")
		if strings.Contains(err.Error(), "this is the last start's failure") {
			refused++
		}
	}
	took := time.Since(begin)
	starts := startFailed.Load()
	t.Logf("%d calls: %d process starts, %d calls refused at once, in %v", calls, starts, refused, took)
	// However slow the machine, starts stay few: after the first (one
	// per worker), each waits out a backoff that doubles from 100 ms to
	// 5 s, so 20 take over a minute, longer than testCtx lets this run.
	assert.Less(t, starts, int64(calls/10))
	assert.Positive(t, refused)

	t.Setenv(envForgetMain, "") // the fix deployed
	require.NoError(t, p.RecycleWorkers(ctx))
	_, err := pool.Run(ctx, p, procPID, struct{}{})
	require.NoError(t, err, "RecycleWorkers' new processes serve at once")
}

// Close during a backoff after a failed start returns without waiting it
// out, and leaves nothing behind (goleak, in TestMain).
func TestSubprocessCloseDuringStartBackoff(t *testing.T) {
	t.Setenv(envForgetMain, "exit")
	p, _ := newProcPool(t, pool.Options{Workers: 2})
	for range 2 {
		_, err := pool.Run(testCtx(t), p, procPID, struct{}{})
		require.ErrorIs(t, err, pool.ErrWorkerStartFailed)
	}
	require.NoError(t, p.Close())
	_, err := pool.Run(testCtx(t), p, procPID, struct{}{})
	require.ErrorIs(t, err, pool.ErrClosed)
}
