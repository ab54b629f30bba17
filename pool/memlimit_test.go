package pool_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/cancel"
	"github.com/offloadgo/offload/internal/testkit"
	"github.com/offloadgo/offload/pool"
)

// procChildHog starts a child process that holds mib MiB, announces its
// pid, and waits for it: it returns (after a minute, the hog's life) only
// if nothing counts the child's memory.
var procChildHog = pool.Register("proc.child-hog", func(_ context.Context, mib int) (int, error) {
	hog, err := testkit.StartMemoryHog("anon", mib)
	if err != nil {
		return 0, err
	}
	fmt.Printf("proc.child-hog pid=%d\n", hog.Cmd.Process.Pid)
	if err := hog.Hold(); err != nil {
		return 0, err
	}
	return 0, hog.Wait()
})

// A task whose child process holds more than MemoryLimit fails with the
// memory-limit error: the worker is replaced and the child dies with it.
func TestMemoryLimitCountsAChild(t *testing.T) {
	t.Parallel()
	p, log := newProcPool(t, pool.Options{Workers: 1, Subprocess: pool.SubprocessOptions{MemoryLimit: 100 << 20}})
	ctx := testCtx(t)
	_, err := pool.Run(ctx, p, procChildHog, 300)
	require.ErrorIs(t, err, pool.ErrWorkerCrashed)
	assert.Contains(t, err.Error(), "memory limit 100 MiB")
	var exit *cancel.Exit
	require.ErrorAs(t, err, &exit)
	assert.Equal(t, cancel.KilledByMemoryLimit, exit.Killed)
	assert.Greater(t, exit.RSS, int64(100<<20))
	waitGone(t, pidFromLog(t, log.String(), "proc.child-hog pid="))
	requireServedAfterCrash(t, ctx, p)
}
