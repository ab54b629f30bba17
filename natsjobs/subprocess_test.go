package natsjobs_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/internal/testkit"
	"github.com/offloadgo/offload/natsjobs"
	"github.com/offloadgo/offload/pool"
)

// On a Subprocess pool, a job that ignores its ctx is killed after
// TerminateGrace once its attempt's Timeout passes, or once it is
// cancelled.
func TestSubprocessKillsOnTimeoutAndCancel(t *testing.T) {
	t.Parallel()
	q, _ := startQueue(t, natsjobs.Options{})
	// The worker process runs before the first job, so that the job's
	// Timeout runs out in the task, not in the process's start.
	p := newPool(t, pool.Options{Workers: 1, MinWorkers: 1, Isolation: pool.Subprocess,
		Subprocess: pool.SubprocessOptions{TerminateGrace: 50 * time.Millisecond}})
	serve(t, q, p, natsjobs.ServeOptions{})
	ctx := testkit.Ctx(t)

	id, err := natsjobs.Enqueue(ctx, q, stubborn, Stubborn{Sleep: time.Minute}, natsjobs.Timeout(time.Second), natsjobs.MaxAttempts(1))
	require.NoError(t, err)
	assert.ErrorContains(t, waitDead(ctx, t, q, stubborn, id), "natsjobs: attempt 1 timed out after 1s")
	require.Eventually(t, func() bool { return p.Stats().Terminated == 1 }, 20*time.Second, 5*time.Millisecond, "killed")

	started := filepath.Join(t.TempDir(), "started")
	id, err = natsjobs.Enqueue(ctx, q, stubborn, Stubborn{Sleep: time.Minute, Started: started})
	require.NoError(t, err)
	require.Eventually(t, func() bool { _, err := os.Stat(started); return err == nil }, 20*time.Second, 5*time.Millisecond,
		"running in the worker process")
	require.NoError(t, q.Cancel(ctx, id))
	_, err = natsjobs.Wait(ctx, q, stubborn, id)
	require.ErrorIs(t, err, natsjobs.ErrCanceled)
	require.Eventually(t, func() bool { return p.Stats().Terminated == 2 }, 20*time.Second, 5*time.Millisecond, "killed")

	// The pool's one worker slot is free again.
	requireDoubled(ctx, t, q, 4)
}

// A Permanent error crosses from a worker process: the job is dead at
// once, at attempt 1, with its text, where a plain error is retried.
func TestPermanentFromAWorkerProcess(t *testing.T) {
	t.Parallel()
	q, _ := startQueue(t, natsjobs.Options{})
	serve(t, q, newPool(t, pool.Options{Workers: 1, Isolation: pool.Subprocess}), natsjobs.ServeOptions{})
	ctx := testkit.Ctx(t)
	id, err := natsjobs.Enqueue(ctx, q, permanent, Keyed{Key: key(t)}, natsjobs.MaxAttempts(3))
	require.NoError(t, err)
	assert.ErrorContains(t, waitDead(ctx, t, q, permanent, id), "bad input, not worth retrying")
	st, err := q.Status(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, 1, st.Attempt, "not retried")
}
