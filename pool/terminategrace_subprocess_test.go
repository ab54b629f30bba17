package pool_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/pool"
	"github.com/offloadgo/offload/transfer"
)

// Tasks for what a running task's cancel does to its worker process
// (DESIGN rule 3): each announces itself with its pid, waits for its ctx,
// announces that it was told, and then returns, never returns or exits.
var (
	// graceReturn returns once its ctx has ended and, if in.Release is a
	// path, once that file exists: the test holds the task past its
	// cancel for as long as it needs, by a signal rather than a sleep.
	graceReturn = pool.Register("test.grace-return", func(ctx context.Context, in graceIn) (int, error) {
		fmt.Printf("grace %s started pid=%d\n", in.Tag, os.Getpid())
		<-ctx.Done()
		fmt.Printf("grace %s told\n", in.Tag)
		for in.Release != "" {
			if _, err := os.Stat(in.Release); err == nil {
				break
			}
			time.Sleep(time.Millisecond)
		}
		return 0, ctx.Err()
	})
	// graceIgnore never returns once told: only the kill ends it.
	graceIgnore = pool.Register("test.grace-ignore", func(ctx context.Context, in graceIn) (int, error) {
		fmt.Printf("grace %s started pid=%d\n", in.Tag, os.Getpid())
		<-ctx.Done()
		fmt.Printf("grace %s told\n", in.Tag)
		select {}
	})
	// graceExit ends its process when told.
	graceExit = pool.Register("test.grace-exit", func(ctx context.Context, in graceIn) (int, error) {
		fmt.Printf("grace %s started pid=%d\n", in.Tag, os.Getpid())
		<-ctx.Done()
		os.Exit(3)
		return 0, nil
	})
	// graceBuffer returns a new Buffer of n bytes once told: a late
	// output that moves shared memory.
	graceBuffer = pool.Register("test.grace-buffer", func(ctx context.Context, n int) (*transfer.Buffer, error) {
		fmt.Printf("grace buffer started pid=%d\n", os.Getpid())
		<-ctx.Done()
		return transfer.NewBuffer(n)
	})
	// echoAfter returns in.Value after in.Pause, whatever its ctx says:
	// its result races its caller's cancel.
	echoAfter = pool.Register("test.echo-after", func(_ context.Context, in echoAfterIn) (int, error) {
		time.Sleep(in.Pause)
		return in.Value, nil
	})
)

type graceIn struct{ Tag, Release string }

type echoAfterIn struct {
	Value int
	Pause time.Duration
}

// longGrace is a TerminateGrace no task that honours its ctx outlasts,
// however busy the machine: a kill within it would fail the test.
const longGrace = time.Minute

// count is how many events of kind l has seen.
func (l *eventLog) count(kind pool.WorkerEventKind) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, ev := range l.events {
		if ev.Kind == kind {
			n++
		}
	}
	return n
}

// A task that returns within its grace once its caller gives up keeps its
// worker process: the caller gets ErrTerminated and its ctx error at once,
// without waiting for the task; the worker's slot stays busy until the
// task returns; the queued task then runs on the same process, and
// nothing counts as terminated.
func TestCancelHonouredKeepsTheProcess(t *testing.T) {
	t.Parallel()
	p, l := eventPool(t, pool.Options{Workers: 1, MaxQueue: 1, Subprocess: pool.SubprocessOptions{TerminateGrace: longGrace}})
	release := filepath.Join(t.TempDir(), "release")
	ctx, cancelRunning := context.WithCancel(testCtx(t))
	running, err := pool.Submit(ctx, p, graceReturn, graceIn{Tag: "kept", Release: release})
	require.NoError(t, err)
	pid := l.logs.waitPID(t, "grace kept started pid=")
	queued, err := pool.Submit(testCtx(t), p, procPID, struct{}{})
	require.NoError(t, err)

	cancelRunning()
	_, err = running.Wait() // the task is held until release exists: this returned without it
	require.ErrorIs(t, err, pool.ErrTerminated)
	require.ErrorIs(t, err, context.Canceled)
	l.logs.waitLog(t, "grace kept told")
	st := p.Stats()
	assert.Equal(t, 1, st.Busy, "the slot stays busy while the task runs on: %+v", st)
	select {
	case <-queued.Done():
		t.Fatal("the queued task ran while the cancelled one still held the worker")
	default:
	}

	require.NoError(t, os.WriteFile(release, nil, 0o600))
	next, err := queued.Wait()
	require.NoError(t, err, "the queued task is untouched")
	assert.Equal(t, pid, next, "the queued task ran in the process the cancelled task returned in")
	st = p.Stats()
	assert.Zero(t, st.Terminated, "%+v", st)
	assert.Zero(t, st.Crashed, "%+v", st)
	assert.EqualValues(t, 1, st.Canceled, "%+v", st)
	assert.EqualValues(t, 1, st.Completed, "%+v", st)
	assert.Zero(t, l.count(pool.WorkerTerminated))
	assert.Equal(t, 1, l.count(pool.WorkerStarted), "no process was started beside the first")
}

// A task that ignores its ctx is killed once its grace is out: the caller
// has its ErrTerminated all the same, the kill counts as
// Terminated (with its event), and the queued task runs on a replacement.
func TestCancelIgnoredKillsAfterTheGrace(t *testing.T) {
	t.Parallel()
	// Long enough that the task prints "told" before the kill, on a
	// busy machine; the test takes that long.
	const grace = time.Second
	p, l := eventPool(t, pool.Options{Workers: 1, MaxQueue: 1, Subprocess: pool.SubprocessOptions{TerminateGrace: grace}})
	ctx, cancelRunning := context.WithCancel(testCtx(t))
	running, err := pool.Submit(ctx, p, graceIgnore, graceIn{Tag: "killed"})
	require.NoError(t, err)
	pid := l.logs.waitPID(t, "grace killed started pid=")
	queued, err := pool.Submit(testCtx(t), p, procPID, struct{}{})
	require.NoError(t, err)

	cancelRunning()
	_, err = running.Wait()
	require.ErrorIs(t, err, pool.ErrTerminated)
	require.ErrorIs(t, err, context.Canceled)
	next, err := queued.Wait()
	require.NoError(t, err, "the queued task is untouched")
	assert.NotEqual(t, pid, next, "the queued task ran on a replacement")
	l.logs.waitLog(t, "grace killed told") // the worker was told before the kill
	st := p.Stats()
	assert.EqualValues(t, 1, st.Terminated, "%+v", st)
	assert.Zero(t, st.Crashed, "%+v", st)
	ev := l.wait(t, pool.WorkerTerminated)
	assert.Equal(t, pid, ev.PID)
}

// A process that ends by itself within its grace was not killed: it
// counts as crashed, not terminated, and the caller (told at once) still
// has ErrTerminated with its ctx error.
func TestCancelThenExitIsACrash(t *testing.T) {
	t.Parallel()
	p, l := eventPool(t, pool.Options{Workers: 1, Subprocess: pool.SubprocessOptions{TerminateGrace: longGrace}})
	ctx, cancelRunning := context.WithCancel(testCtx(t))
	running, err := pool.Submit(ctx, p, graceExit, graceIn{Tag: "exits"})
	require.NoError(t, err)
	pid := l.logs.waitPID(t, "grace exits started pid=")
	cancelRunning()
	_, err = running.Wait()
	require.ErrorIs(t, err, pool.ErrTerminated)
	require.ErrorIs(t, err, context.Canceled)
	next, err := pool.Run(testCtx(t), p, procPID, struct{}{})
	require.NoError(t, err)
	assert.NotEqual(t, pid, next)
	st := p.Stats()
	assert.Zero(t, st.Terminated, "%+v", st)
	assert.EqualValues(t, 1, st.Crashed, "%+v", st)
	ev := l.wait(t, pool.WorkerCrashed)
	require.NotNil(t, ev.Exit)
	assert.Equal(t, 3, ev.Exit.Code)
}

// A late output that moved a Buffer goes to nobody, and is freed: the
// parent's books and the worker's arena are back where they were, and the
// process serves on.
func TestCancelHonouredFreesTheLateOutput(t *testing.T) {
	// Not parallel: it reads this process's transfer.Stats.
	p, log := newProcPool(t, pool.Options{Workers: 1, Subprocess: pool.SubprocessOptions{TerminateGrace: longGrace}})
	base := transfer.Stats().InUse
	workerBase, err := pool.Run(testCtx(t), p, arenaInUse, 0)
	require.NoError(t, err)
	ctx, cancelRunning := context.WithCancel(testCtx(t))
	f, err := pool.Submit(ctx, p, graceBuffer, 1<<20)
	require.NoError(t, err)
	pid := log.waitPID(t, "grace buffer started pid=")
	cancelRunning()
	out, err := f.Wait()
	require.ErrorIs(t, err, pool.ErrTerminated)
	assert.Nil(t, out, "the caller gets no output")
	next, err := pool.Run(testCtx(t), p, procPID, struct{}{})
	require.NoError(t, err)
	assert.Equal(t, pid, next, "the process served on")
	assert.Equal(t, base, transfer.Stats().InUse, "the late output's Buffer is freed")
	// The release went to the worker with the last call: it is done there.
	after, err := pool.Run(testCtx(t), p, arenaInUse, 0)
	require.NoError(t, err)
	assert.Equal(t, workerBase, after, "the worker's arena is back where it was")
	assert.Zero(t, p.Stats().Terminated)
}

// A cancel that races the task's own result must not confuse the calls
// that follow: the late reply to call N (whichever way the race went) is
// never taken for call N+1's answer, and no process is lost to it. Each
// round cancels a task at a different moment of its run.
func TestCancelRacingTheResultNeverAnswersTheNextCall(t *testing.T) {
	t.Parallel()
	p, _ := newProcPool(t, pool.Options{Workers: 1, Subprocess: pool.SubprocessOptions{TerminateGrace: longGrace}})
	pid, err := pool.Run(testCtx(t), p, procPID, struct{}{})
	require.NoError(t, err)
	outcomes := map[string]int{}
	for i := range 200 {
		ctx, cancelRace := context.WithCancel(testCtx(t))
		f, err := pool.Submit(ctx, p, echoAfter, echoAfterIn{Value: i, Pause: time.Duration(i%4) * 50 * time.Microsecond})
		require.NoError(t, err)
		for range i % 7 {
			runtime.Gosched()
		}
		cancelRace()
		out, err := f.Wait()
		switch {
		case err == nil:
			assert.Equal(t, i, out)
			outcomes["result"]++
		case errors.Is(err, pool.ErrTerminated):
			require.ErrorIs(t, err, context.Canceled)
			outcomes["terminated"]++
		default:
			require.ErrorIs(t, err, context.Canceled)
			outcomes["canceled before it was sent"]++
		}
		next, err := pool.Run(testCtx(t), p, echoAfter, echoAfterIn{Value: -1 - i})
		require.NoError(t, err)
		require.Equal(t, -1-i, next, "round %d: the next call got another call's answer", i)
	}
	t.Logf("outcomes of the raced calls: %v", outcomes)
	last, err := pool.Run(testCtx(t), p, procPID, struct{}{})
	require.NoError(t, err)
	assert.Equal(t, pid, last, "no cancel cost the process")
	st := p.Stats()
	assert.Zero(t, st.Terminated, "%+v", st)
	assert.Zero(t, st.Crashed, "%+v", st)
}

// Close stops a running task as a caller's cancel does: the caller gets
// ErrTerminated and ErrClosed at once, queued tasks get ErrClosed, the
// task gets its grace, and its process is killed only if it ignores its
// ctx. Either way no process outlives the pool.
func TestCloseGivesRunningTasksTheirGrace(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		task   pool.Task[graceIn, int]
		killed bool
	}{
		{"honours its ctx", graceReturn, false},
		{"ignores its ctx", graceIgnore, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			grace := longGrace
			if tc.killed {
				grace = time.Second // the test waits it out
			}
			p, l := eventPool(t, pool.Options{Workers: 1, MaxQueue: 1, Subprocess: pool.SubprocessOptions{TerminateGrace: grace}})
			ctx := testCtx(t)
			running, err := pool.Submit(ctx, p, tc.task, graceIn{Tag: "closed"})
			require.NoError(t, err)
			pid := l.logs.waitPID(t, "grace closed started pid=")
			queued, err := pool.Submit(ctx, p, procPID, struct{}{})
			require.NoError(t, err)

			requireCloseEnds(t, ctx, p, running, queued)
			waitGone(t, pid)
			l.logs.waitLog(t, "grace closed told")
			if tc.killed {
				assert.EqualValues(t, 1, p.Stats().Terminated)
				assert.Equal(t, pid, l.wait(t, pool.WorkerTerminated).PID)
			} else {
				assert.Zero(t, p.Stats().Terminated)
				assert.Zero(t, l.count(pool.WorkerTerminated))
			}
			assert.Zero(t, p.Stats().Crashed)
		})
	}
}
