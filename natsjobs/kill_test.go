//go:build unix

package natsjobs_test

import (
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/natsjobs"
	"github.com/offloadgo/offload/natsremote/embedded"
	"github.com/offloadgo/offload/pool"
)

const processLease = 300 * time.Millisecond

func startListening(t *testing.T) (*embedded.Server, *natsjobs.Queue) {
	t.Helper()
	s, err := embedded.Start(embedded.Options{Listen: true, StoreDir: t.TempDir()})
	require.NoError(t, err)
	t.Cleanup(s.Shutdown)
	nc, err := s.Connect()
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	return s, open(t, nc, natsjobs.Options{Lease: processLease})
}

// A worker process killed mid-job has its job run again, on another
// worker, once its lease passes: attempt 2, one success.
func TestWorkerKilledMidJob(t *testing.T) {
	t.Parallel()
	s, q := startListening(t)
	worker := startServeProcess(t, s.ClientURL(), processLease)
	ctx := testCtx(t)
	id, err := natsjobs.Enqueue(ctx, q, pid, PidIn{There: time.Minute})
	require.NoError(t, err)
	waitRunning(t, q, id, 1)
	require.NoError(t, worker.Process.Kill())
	_ = worker.Wait()

	serve(t, q, newPool(t, pool.Options{Workers: 1}), natsjobs.ServeOptions{})
	out, err := natsjobs.Wait(ctx, q, pid, id)
	require.NoError(t, err)
	assert.Equal(t, os.Getpid(), out, "run again here")
	st, err := q.Status(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, 2, st.Attempt, "redelivered once its lease passed, as attempt 2")
}

// A worker paused past its lease (SIGSTOP) loses its job to another;
// resumed after that one's success, it can't overwrite it.
func TestWorkerPausedPastItsLease(t *testing.T) {
	t.Parallel()
	s, q := startListening(t)
	worker := startServeProcess(t, s.ClientURL(), processLease)
	ctx := testCtx(t)
	id, err := natsjobs.Enqueue(ctx, q, pid, PidIn{There: 500 * time.Millisecond})
	require.NoError(t, err)
	waitRunning(t, q, id, 1)
	require.NoError(t, worker.Process.Signal(syscall.SIGSTOP))

	serve(t, q, newPool(t, pool.Options{Workers: 1}), natsjobs.ServeOptions{})
	out, err := natsjobs.Wait(ctx, q, pid, id)
	require.NoError(t, err)
	assert.Equal(t, os.Getpid(), out, "attempt 2, run here")

	// Resumed, the paused worker's run ends (its time passed while it
	// was stopped) and it settles before it exits on SIGTERM.
	require.NoError(t, worker.Process.Signal(syscall.SIGCONT))
	require.NoError(t, worker.Process.Signal(syscall.SIGTERM))
	require.NoError(t, worker.Wait(), "the paused worker drained and exited")
	st, err := q.Status(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, natsjobs.Succeeded, st.State)
	assert.Equal(t, 2, st.Attempt)
	out, err = natsjobs.Wait(ctx, q, pid, id)
	require.NoError(t, err)
	assert.Equal(t, os.Getpid(), out, "still attempt 2's outcome")
}
