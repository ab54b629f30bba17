package pool_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/offloadgo/offload/cancel"
	"github.com/offloadgo/offload/internal/workerproc"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/internal/testkit"
	"github.com/offloadgo/offload/pool"
	"github.com/offloadgo/offload/transfer"
)

func TestSubprocessRoundTrip(t *testing.T) {
	t.Parallel()
	p, _ := newProcPool(t, pool.Options{Workers: 2, MinWorkers: 1})
	ctx := testCtx(t)
	for i := range 20 {
		out, err := pool.Run(ctx, p, add, [2]int{i, 100})
		require.NoError(t, err)
		assert.Equal(t, i+100, out)
	}
	in := echoIn{Name: "héllo", Count: 41, Tags: map[string][]byte{"k": {0, 1, 2}}}
	got, err := pool.Run(ctx, p, procEcho, in)
	require.NoError(t, err)
	assert.Equal(t, echoIn{Name: "héllo", Count: 42, Tags: in.Tags}, got)

	_, err = pool.Run(ctx, p, procFail, "no luck")
	var remote *pool.RemoteError
	require.ErrorAs(t, err, &remote)
	assert.Equal(t, "task says: no luck", err.Error())
	assert.Equal(t, "proc.fail", remote.Task)

	pid, err := pool.Run(ctx, p, procPID, struct{}{})
	require.NoError(t, err)
	assert.NotEqual(t, os.Getpid(), pid, "the task ran in another process")

	st := p.Stats()
	assert.EqualValues(t, 22, st.Completed)
	assert.EqualValues(t, 1, st.Failed)
}

func TestSubprocessPanicKeepsWorker(t *testing.T) {
	t.Parallel()
	p, _ := newProcPool(t, pool.Options{Workers: 1})
	ctx := testCtx(t)
	before, err := pool.Run(ctx, p, procPID, struct{}{})
	require.NoError(t, err)
	_, err = pool.Run(ctx, p, procPanic, "kaboom")
	var pe *pool.PanicError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "proc.panic", pe.Task)
	assert.Equal(t, "kaboom", pe.Value)
	assert.Contains(t, string(pe.Stack), "goroutine")
	_, err = pool.Run(ctx, p, procCrash, "nil-here")
	require.ErrorAs(t, err, &pe, "a nil dereference on the task's goroutine is a panic too")
	var remote *pool.RemoteError
	require.ErrorAs(t, pe.Value.(error), &remote, "a runtime.Error crosses as a RemoteError")
	assert.Contains(t, remote.Message, "nil pointer dereference")
	after, err := pool.Run(ctx, p, procPID, struct{}{})
	require.NoError(t, err)
	assert.Equal(t, before, after, "the worker survived the panics")
	assert.Zero(t, p.Stats().Crashed)
}

// Tasks that never look at their ctx are killed on their deadline, and the
// pool serves the next task on a replacement.
func TestSubprocessHardKill(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		run  func(ctx context.Context, p *pool.Pool) error
	}{
		{"spin forever", func(ctx context.Context, p *pool.Pool) error {
			_, err := pool.Run(ctx, p, procSpin, struct{}{})
			return err
		}},
		{"exponential backtracking", func(ctx context.Context, p *pool.Pool) error {
			in := matchIn{Pattern: strings.Repeat("a*", 30) + "c", Text: strings.Repeat("a", 40) + "b"}
			_, err := pool.Run(ctx, p, procMatch, in)
			return err
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p, _ := newProcPool(t, pool.Options{Workers: 1, MinWorkers: 1})
			// The worker process must be up: a task whose deadline passes
			// while its process starts was never sent, and gets the plain
			// deadline error, not ErrTerminated.
			_, err := pool.Run(testCtx(t), p, add, [2]int{0, 0})
			require.NoError(t, err)
			ctx, cancel := context.WithTimeout(testCtx(t), 300*time.Millisecond)
			defer cancel()
			start := time.Now()
			err = tc.run(ctx, p)
			require.ErrorIs(t, err, pool.ErrTerminated)
			require.ErrorIs(t, err, context.DeadlineExceeded)
			assert.Less(t, time.Since(start), 5*time.Second)
			out, err := pool.Run(testCtx(t), p, add, [2]int{1, 2})
			require.NoError(t, err)
			assert.Equal(t, 3, out)
			st := p.Stats()
			assert.EqualValues(t, 1, st.Terminated)
			assert.EqualValues(t, 1, st.Canceled, "the deadline's end is Canceled, whoever noticed it first")
			assert.Zero(t, st.Failed)
			assert.EqualValues(t, 2, st.Completed)
		})
	}
}

// Each way a worker process can die fails only the task it ran.
func TestSubprocessCrashMatrix(t *testing.T) {
	t.Parallel()
	cases := []struct {
		how   string
		opts  pool.Options
		wants []string // in the error's message
	}{
		{"exit3", pool.Options{}, []string{"status 3", "exiting with status 3"}},
		{"goroutine-panic", pool.Options{}, []string{"status 2", "boom on a task's own goroutine"}},
		{"fatal", pool.Options{}, []string{"stack overflow"}},
		{"nil", pool.Options{}, []string{"nil pointer dereference", "SIGSEGV"}},
		{"alloc", pool.Options{Subprocess: pool.SubprocessOptions{MemoryLimit: 96 << 20}}, []string{"memory limit 96 MiB"}},
	}
	for _, tc := range cases {
		t.Run(tc.how, func(t *testing.T) {
			t.Parallel()
			tc.opts.Workers = 1
			p, _ := newProcPool(t, tc.opts)
			ctx := testCtx(t)
			_, err := pool.Run(ctx, p, procCrash, tc.how)
			require.ErrorIs(t, err, pool.ErrWorkerCrashed)
			for _, want := range tc.wants {
				assert.Contains(t, err.Error(), want)
			}
			var exit *cancel.Exit
			require.ErrorAs(t, err, &exit, "the crash error carries the exit account")
			switch tc.how {
			case "exit3":
				assert.Equal(t, 3, exit.Code)
			case "alloc":
				assert.Equal(t, cancel.KilledByMemoryLimit, exit.Killed)
			default:
				assert.Equal(t, 2, exit.Code, "the Go runtime's crash status")
				assert.NotEmpty(t, exit.Crash)
			}
			st := requireServedAfterCrash(t, ctx, p)
			assert.EqualValues(t, 1, st.Completed)
		})
	}
	t.Run("kill -9 from outside", func(t *testing.T) {
		t.Parallel()
		p, log := newProcPool(t, pool.Options{Workers: 1})
		ctx := testCtx(t)
		f, err := pool.Submit(ctx, p, procBlock, "victim")
		require.NoError(t, err)
		pid := log.waitPID(t, "proc.block victim started pid=")
		require.NoError(t, killPID(pid))
		_, err = f.Wait()
		require.ErrorIs(t, err, pool.ErrWorkerCrashed)
		assert.Contains(t, err.Error(), "signal")
		assert.Contains(t, err.Error(), "killed")
		next, err := pool.Run(ctx, p, procPID, struct{}{})
		require.NoError(t, err)
		assert.NotEqual(t, pid, next)
	})
}

func TestSubprocessOutputGoesToLog(t *testing.T) {
	t.Parallel()
	p, log := newProcPool(t, pool.Options{Workers: 1})
	ctx := testCtx(t)
	for i := range 5 {
		out, err := pool.Run(ctx, p, procGarbage, 50+i)
		require.NoError(t, err)
		assert.Equal(t, 2*(50+i), out)
	}
	log.waitLog(t, "frame-looking bytes 49")
	log.waitLog(t, "stream=stderr")
	log.waitLog(t, "no newline at the end")
	assert.Contains(t, log.String(), "worker=1")
}

func TestSubprocessCancelWithGrace(t *testing.T) {
	t.Parallel()
	p, log := newProcPool(t, pool.Options{Workers: 1, Subprocess: pool.SubprocessOptions{TerminateGrace: 10 * time.Second}})
	ctx, cancel := context.WithCancel(testCtx(t))
	f, err := pool.Submit(ctx, p, procBlock, "graceful")
	require.NoError(t, err)
	log.waitLog(t, "proc.block graceful started")
	start := time.Now()
	cancel()
	_, err = f.Wait()
	require.ErrorIs(t, err, pool.ErrTerminated)
	require.ErrorIs(t, err, context.Canceled)
	assert.Less(t, time.Since(start), 5*time.Second, "the caller does not wait for the grace")
	log.waitLog(t, "proc.block graceful cancelled") // the worker was told
	out, err := pool.Run(testCtx(t), p, add, [2]int{1, 1})
	require.NoError(t, err)
	assert.Equal(t, 2, out)
}

func TestSubprocessMaxTasksPerWorker(t *testing.T) {
	t.Parallel()
	p, _ := newProcPool(t, pool.Options{Workers: 1, Subprocess: pool.SubprocessOptions{MaxTasksPerWorker: 3}})
	ctx := testCtx(t)
	var pids []int
	for range 7 {
		pid, err := pool.Run(ctx, p, procPID, struct{}{})
		require.NoError(t, err)
		pids = append(pids, pid)
	}
	for i := range pids {
		if i%3 == 0 {
			if i > 0 {
				assert.NotEqual(t, pids[i-1], pids[i], "a fresh process after 3 tasks: %v", pids)
			}
		} else {
			assert.Equal(t, pids[i-1], pids[i], "the same process within 3 tasks: %v", pids)
		}
	}
}

func TestSubprocessPayloadLimits(t *testing.T) {
	t.Parallel()
	p, _ := newProcPool(t, pool.Options{Workers: 1, Subprocess: pool.SubprocessOptions{MaxPayload: 1024}})
	ctx := testCtx(t)
	_, err := pool.Run(ctx, p, procEcho, echoIn{Name: strings.Repeat("y", 2000)})
	require.ErrorIs(t, err, pool.ErrPayloadTooLarge)
	assert.Contains(t, err.Error(), "input")
	assert.Zero(t, p.Stats().Submitted, "refused before admission")

	_, err = pool.Run(ctx, p, procBig, 4000)
	require.ErrorIs(t, err, pool.ErrPayloadTooLarge)
	assert.Contains(t, err.Error(), "output")
	out, err := pool.Run(ctx, p, procBig, 10)
	require.NoError(t, err)
	assert.Equal(t, "xxxxxxxxxx", out)
}

func TestSubprocessUnencodableInput(t *testing.T) {
	t.Parallel()
	p, _ := newProcPool(t, pool.Options{Workers: 1, MaxQueue: pool.NoQueue})
	_, err := pool.Run(testCtx(t), p, procChan, chanIn{C: make(chan int)})
	require.ErrorIs(t, err, transfer.ErrNotTransferable)
	assert.Contains(t, err.Error(), `pool: task "proc.chan": In type pool_test.chanIn: field C (chan int)`)
	st := p.Stats()
	assert.Zero(t, st.Submitted)
	assert.EqualValues(t, 1, st.Rejected)
	assert.Zero(t, st.Workers, "nothing was started for it")
}

// Queue-full and cancel-queued hold as they do in process.
func TestSubprocessQueue(t *testing.T) {
	t.Parallel()
	p, log := newProcPool(t, pool.Options{Workers: 1, MaxQueue: 1})
	ctx := testCtx(t)
	running, cancelRunning := context.WithCancel(ctx)
	a, err := pool.Submit(running, p, procBlock, "a")
	require.NoError(t, err)
	log.waitLog(t, "proc.block a started")
	queued, cancelQueued := context.WithCancel(ctx)
	b, err := pool.Submit(queued, p, add, [2]int{1, 1})
	require.NoError(t, err)
	_, err = pool.Submit(ctx, p, add, [2]int{1, 1})
	require.ErrorIs(t, err, pool.ErrQueueFull)

	cancelQueued()
	_, err = b.Wait()
	require.ErrorIs(t, err, context.Canceled)
	assert.NotErrorIs(t, err, pool.ErrTerminated, "a queued task is not terminated")
	assert.Zero(t, p.Stats().Queued)
	c, err := pool.Submit(ctx, p, add, [2]int{2, 3})
	require.NoError(t, err, "the slot is free again")

	cancelRunning()
	_, err = a.Wait()
	require.ErrorIs(t, err, pool.ErrTerminated)
	out, err := c.Wait()
	require.NoError(t, err, "the queued task runs on the replacement")
	assert.Equal(t, 5, out)
}

func TestSubprocessShutdownAndClose(t *testing.T) {
	t.Parallel()
	t.Run("Shutdown lets running and queued tasks finish", func(t *testing.T) {
		t.Parallel()
		p, _ := newProcPool(t, pool.Options{Workers: 1, MinWorkers: 1})
		ctx := testCtx(t)
		first, err := pool.Submit(ctx, p, procSleep, 100*time.Millisecond)
		require.NoError(t, err)
		second, err := pool.Submit(ctx, p, add, [2]int{3, 4})
		require.NoError(t, err)
		require.NoError(t, p.Shutdown(ctx))
		out, err := first.Wait()
		require.NoError(t, err)
		assert.Equal(t, 1, out)
		sum, err := second.Wait()
		require.NoError(t, err)
		assert.Equal(t, 7, sum)
	})
	t.Run("Close terminates running tasks", func(t *testing.T) {
		t.Parallel()
		p, log := newProcPool(t, pool.Options{Workers: 1})
		ctx := testCtx(t)
		f, err := pool.Submit(ctx, p, procBlock, "closed")
		require.NoError(t, err)
		queued, err := pool.Submit(ctx, p, add, [2]int{1, 1})
		require.NoError(t, err)
		log.waitLog(t, "proc.block closed started")
		requireCloseEnds(t, ctx, p, f, queued)
	})
}

// No process, goroutine or descriptor outlives a pool. Not parallel: it
// counts the whole test process's children and descriptors.
func TestSubprocessLeavesNothing(t *testing.T) {
	fds, kids := countFDs(t), countChildren(t)
	requireSubprocess(t)
	p, err := pool.New(pool.Options{Workers: 2, MinWorkers: 2, Isolation: pool.Subprocess, Logger: (&logCapture{}).logger()})
	require.NoError(t, err)
	ctx := testCtx(t)
	for i := range 10 {
		_, err := pool.Run(ctx, p, add, [2]int{i, i})
		require.NoError(t, err)
	}
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	_, err = pool.Run(short, p, procSpin, struct{}{})
	cancel()
	require.ErrorIs(t, err, pool.ErrTerminated)
	// The killed worker is reaped in the background, beside its replacement.
	require.Eventually(t, func() bool { return countChildren(t)-kids == 2 }, 10*time.Second, time.Millisecond,
		"two workers while open")
	require.NoError(t, p.Shutdown(ctx))
	assert.Equal(t, kids, countChildren(t), "no worker process left")
	assert.Equal(t, fds, countFDs(t), "no descriptor left")
}

// A process that is a worker but skipped Main must not start workers of
// its own.
func TestSubprocessRefusedInWorkerWithoutMain(t *testing.T) {
	t.Setenv(workerproc.EnvWorker, "1")
	requireSubprocess(t)
	p, err := pool.New(pool.Options{Isolation: pool.Subprocess})
	require.Error(t, err)
	assert.Nil(t, p)
	assert.Contains(t, err.Error(), "pool.Main")
}

// Worker processes follow the same lifecycle as goroutine workers:
// MinWorkers warm, more on demand up to Workers, the ones above MinWorkers
// gone after IdleTimeout (their processes with them).
func TestSubprocessIdleWorkersExit(t *testing.T) {
	t.Parallel()
	p, _ := newProcPool(t, pool.Options{Workers: 2, MinWorkers: 1, IdleTimeout: 40 * time.Millisecond})
	// a holds its process until b has returned, so b ran in a second
	// process (counting Workers here instead would race the 40 ms idle
	// timeout of b's process on a busy machine).
	release := filepath.Join(t.TempDir(), "release")
	a, err := pool.Submit(context.Background(), p, procAwaitFile, release)
	require.NoError(t, err)
	b, err := pool.Submit(context.Background(), p, procPID, struct{}{})
	require.NoError(t, err)
	pidB, err := b.Wait()
	require.NoError(t, err, "a second process serves while the first is busy")
	require.NoError(t, os.WriteFile(release, nil, 0o600))
	pidA, err := a.Wait()
	require.NoError(t, err)
	require.NotEqual(t, pidA, pidB, "b ran while a held the first process")

	require.Eventually(t, func() bool { return p.Stats().Workers == 1 }, 10*time.Second, 5*time.Millisecond)
	left, err := pool.Run(context.Background(), p, procPID, struct{}{})
	require.NoError(t, err, "the warm worker still serves")
	if left != pidB {
		require.Eventually(t, func() bool { return testkit.ProcessReaped(pidB) }, 10*time.Second, 5*time.Millisecond,
			"the retired worker's process %d is gone", pidB)
	}
}
