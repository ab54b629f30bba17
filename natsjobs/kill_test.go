//go:build unix

package natsjobs_test

import (
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/internal/testkit"
	"github.com/offloadgo/offload/natsjobs"
	"github.com/offloadgo/offload/natsremote/embedded"
	"github.com/offloadgo/offload/pool"
)

// processLease is the worker services' lease: a heartbeat every third of it,
// which a busy machine keeps up with.
const processLease = time.Second

func startListening(t *testing.T) (*embedded.Server, *natsjobs.Queue) {
	t.Helper()
	s, nc := startRestartable(t)
	return s, open(t, nc, natsjobs.Options{Lease: processLease})
}

// A worker process killed mid-job has its job run again, on another
// worker, once its lease passes: attempt 2, one success.
func TestWorkerKilledMidJob(t *testing.T) {
	t.Parallel()
	s, q := startListening(t)
	worker := startServeProcess(t, s.ClientURL(), processLease)
	ctx := testkit.Ctx(t)
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
	ctx := testkit.Ctx(t)
	id, err := natsjobs.Enqueue(ctx, q, pid, PidIn{There: 2 * time.Second})
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

// Worker services stopped one after the other (SIGTERM, Drain) and
// started again while jobs run lose none and run none twice.
func TestRollingRestartOfWorkers(t *testing.T) {
	t.Parallel()
	const jobs = 200
	s, q := startListening(t)
	nc, err := nats.Connect(s.ClientURL())
	require.NoError(t, err)
	defer nc.Close()
	var mu sync.Mutex
	ran := map[string]int{}
	sub, err := nc.Subscribe(ranSubject, func(m *nats.Msg) {
		mu.Lock()
		ran[string(m.Data)]++
		mu.Unlock()
	})
	require.NoError(t, err)
	defer func() { _ = sub.Unsubscribe() }()
	require.NoError(t, nc.Flush())

	const lease = 10 * time.Second // long enough that no lease passes
	workers := []*exec.Cmd{startServeProcess(t, s.ClientURL(), lease), startServeProcess(t, s.ClientURL(), lease)}
	ctx := testkit.Ctx(t)
	ids := make([]natsjobs.ID, jobs)
	for i := range ids {
		ids[i], err = natsjobs.Enqueue(ctx, q, counted, Keyed{Key: strconv.Itoa(i), Sleep: 10 * time.Millisecond})
		require.NoError(t, err)
	}
	ranSoFar := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(ran)
	}
	for i, w := range workers {
		require.Eventually(t, func() bool { return ranSoFar() >= 40*(i+1) }, 20*time.Second, time.Millisecond, "stopped mid-queue")
		require.NoError(t, w.Process.Signal(syscall.SIGTERM))
		require.NoError(t, w.Wait(), "drained and exited")
		workers[i] = startServeProcess(t, s.ClientURL(), lease)
	}
	for i, id := range ids {
		out, err := natsjobs.Wait(ctx, q, counted, id)
		require.NoError(t, err)
		require.Equal(t, strconv.Itoa(i), out)
		st, err := q.Status(ctx, id)
		require.NoError(t, err)
		require.Equal(t, 1, st.Attempt, "job %d", i)
	}
	require.Eventually(t, func() bool { return ranSoFar() == jobs }, 20*time.Second, 10*time.Millisecond, "every job ran")
	mu.Lock()
	defer mu.Unlock()
	for k, n := range ran {
		assert.Equal(t, 1, n, "job %s ran once", k)
	}
}
