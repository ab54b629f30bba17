package pool_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/pool"
)

// Under a steady load, RecycleWorkers puts a new process under every
// worker: no call fails, and a long call in flight finishes on its old
// process, which RecycleWorkers waits for. Not parallel: it reads the
// workers' log to follow the long call, and times the calls.
func TestRecycleWorkersReplacesEveryProcessUnderLoad(t *testing.T) {
	const workers = 3
	p, l := eventPool(t, pool.Options{Workers: workers, MinWorkers: workers, MaxQueue: 16})
	ctx := testCtx(t)
	dir := t.TempDir()
	old := holdEveryWorker(t, p, l, dir, "before", workers)

	long := submitAwait(t, p, dir, "long")
	l.logs.waitLog(t, "proc.await-file long started")

	var stop atomic.Bool
	var calls, failed atomic.Int64
	var slowest atomic.Int64
	var load sync.WaitGroup
	for range workers - 1 {
		load.Go(func() {
			for !stop.Load() {
				begin := time.Now()
				_, err := pool.Run(ctx, p, add, [2]int{1, 2})
				took := int64(time.Since(begin))
				for s := slowest.Load(); took > s && !slowest.CompareAndSwap(s, took); s = slowest.Load() {
				}
				calls.Add(1)
				if err != nil {
					failed.Add(1)
					t.Errorf("call under RecycleWorkers: %v", err)
				}
			}
		})
	}

	recycled := make(chan error, 1)
	go func() { recycled <- p.RecycleWorkers(ctx) }()
	// The two idle-or-loaded workers switch; the long call's does not.
	require.Eventually(t, func() bool { return len(l.all(pool.WorkerRecycled)) == workers-1 },
		20*time.Second, time.Millisecond, "the workers without the long call were not recycled")
	select {
	case err := <-recycled:
		t.Fatalf("RecycleWorkers returned (%v) while a worker's old process still ran a call", err)
	default:
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "long"), nil, 0o600))
	pid, err := long.Wait()
	require.NoError(t, err, "the long call in flight must finish")
	assert.Contains(t, old, pid, "the long call must finish on its old process")
	require.NoError(t, <-recycled)
	stop.Store(true)
	load.Wait()

	assert.Zero(t, failed.Load())
	now := holdEveryWorker(t, p, l, dir, "after", workers)
	for pid := range now {
		assert.NotContains(t, old, pid, "a worker still runs an old process")
	}
	gone := l.all(pool.WorkerRecycled)
	require.Len(t, gone, workers)
	for _, ev := range gone {
		assert.Contains(t, old, ev.PID)
	}
	st := p.Stats()
	assert.EqualValues(t, workers, st.Recycled)
	assert.Equal(t, workers, st.Workers)

	var slowestStart time.Duration
	for _, ev := range l.all(pool.WorkerStarted) {
		if ev.Replacing == pool.WorkerRecycled {
			slowestStart = max(slowestStart, ev.Took)
		}
	}
	// The figure the issue asks for; logged, not asserted: a busy machine
	// can stall any call longer than a start.
	t.Logf("%d calls under RecycleWorkers, none failed: slowest call %v, longest queue wait %v; slowest worker start %v",
		calls.Load(), time.Duration(slowest.Load()), st.WaitTime.Max, slowestStart)
}

// A new process that does not come up fails RecycleWorkers with
// ErrWorkerStartFailed, and every worker keeps its old process. Not
// parallel: it sets the workers' environment.
func TestRecycleWorkersStartFailureKeepsOldProcesses(t *testing.T) {
	const workers = 2
	p, l := eventPool(t, pool.Options{Workers: workers, MinWorkers: workers})
	dir := t.TempDir()
	old := holdEveryWorker(t, p, l, dir, "before", workers)

	t.Setenv(envForgetMain, "exit") // the deployed binary is broken
	err := p.RecycleWorkers(testCtx(t))
	require.ErrorIs(t, err, pool.ErrWorkerStartFailed)
	assert.Contains(t, err.Error(), "exited with status 1")
	assert.Contains(t, err.Error(), "of 2 workers, 0 run a new process, 0 switch to theirs after their current task, 2 keep their old one")
	t.Log(err)

	assert.Equal(t, old, holdEveryWorker(t, p, l, dir, "after", workers))
	assert.Zero(t, p.Stats().Recycled)
	assert.Empty(t, l.all(pool.WorkerRecycled))
}

// When ctx ends, RecycleWorkers returns its error, saying how far it got,
// and every worker serves: those already handed a new process switch after
// their current call, the rest keep their old one. Not parallel: it sets
// the workers' environment.
func TestRecycleWorkersStopsWithCtx(t *testing.T) {
	t.Run("waiting for a long call", func(t *testing.T) {
		const workers = 2
		p, l := eventPool(t, pool.Options{Workers: workers, MinWorkers: workers})
		dir := t.TempDir()
		old := holdEveryWorker(t, p, l, dir, "before", workers)
		// A long call on worker 1, which RecycleWorkers visits first:
		// once worker 2 has switched, worker 1 has its new process too.
		long := onWorker1(t, p, l, dir)

		ctx, cancel := context.WithCancel(testCtx(t))
		recycled := make(chan error, 1)
		go func() { recycled <- p.RecycleWorkers(ctx) }()
		assert.Equal(t, 2, l.wait(t, pool.WorkerRecycled).Worker)
		// A call served by worker 2 (worker 1 is busy) comes after its
		// switch is complete.
		pid2, err := pool.Run(testCtx(t), p, procPID, struct{}{})
		require.NoError(t, err)
		assert.NotContains(t, old, pid2)
		cancel()
		err = <-recycled
		require.ErrorIs(t, err, context.Canceled)
		assert.Contains(t, err.Error(), "of 2 workers, 1 run a new process, 1 switch to theirs after their current task, 0 keep their old one")
		t.Log(err)

		pid, err := long()
		require.NoError(t, err)
		assert.Contains(t, old, pid)
		// Its worker takes the process it was handed once the call is over.
		require.Eventually(t, func() bool { return len(l.all(pool.WorkerRecycled)) == workers },
			20*time.Second, time.Millisecond)
		for pid := range holdEveryWorker(t, p, l, dir, "after", workers) {
			assert.NotContains(t, old, pid)
		}
	})
	t.Run("waiting for a hello", func(t *testing.T) {
		const workers = 2
		p, l := eventPool(t, pool.Options{Workers: workers, MinWorkers: workers})
		dir := t.TempDir()
		old := holdEveryWorker(t, p, l, dir, "before", workers)
		t.Setenv(envForgetMain, "serve") // a new process that never says hello
		ctx, cancel := context.WithTimeout(testCtx(t), 300*time.Millisecond)
		defer cancel()
		err := p.RecycleWorkers(ctx)
		require.ErrorIs(t, err, context.DeadlineExceeded)
		assert.Contains(t, err.Error(), "0 run a new process, 0 switch to theirs after their current task, 2 keep their old one")
		assert.Equal(t, old, holdEveryWorker(t, p, l, dir, "after", workers))
		assert.Empty(t, l.all(pool.WorkerRecycled))
	})
}

// Calls of RecycleWorkers run one after another, each replacing every
// worker; after Shutdown they return ErrClosed.
func TestRecycleWorkersConcurrentAndClosed(t *testing.T) {
	t.Parallel()
	const workers = 2
	p, l := eventPool(t, pool.Options{Workers: workers, MinWorkers: workers})
	ctx := testCtx(t)
	holdEveryWorker(t, p, l, t.TempDir(), "up", workers) // both serve
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() { assert.NoError(t, p.RecycleWorkers(ctx)) })
	}
	wg.Wait()
	assert.EqualValues(t, 2*workers, p.Stats().Recycled)
	assert.Len(t, l.all(pool.WorkerRecycled), 2*workers)
	_, err := pool.Run(ctx, p, add, [2]int{1, 2})
	require.NoError(t, err)

	require.NoError(t, p.Shutdown(ctx))
	require.ErrorIs(t, p.RecycleWorkers(ctx), pool.ErrClosed)
}

// holdEveryWorker runs one call on each of n workers at once, so that
// each lands on its own process, and returns their pids.
func holdEveryWorker(t *testing.T, p *pool.Pool, l *eventLog, dir, tag string, n int) map[int]bool {
	t.Helper()
	futures := make([]*pool.Future[int], n)
	for i := range n {
		futures[i] = submitAwait(t, p, dir, fmt.Sprintf("%s-%d", tag, i))
	}
	for i := range n {
		l.logs.waitLog(t, fmt.Sprintf("proc.await-file %s-%d started", tag, i))
	}
	for i := range n {
		require.NoError(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("%s-%d", tag, i)), nil, 0o600))
	}
	pids := make(map[int]bool, n)
	for _, f := range futures {
		pid, err := f.Wait()
		require.NoError(t, err)
		pids[pid] = true
	}
	require.Len(t, pids, n, "each call must have had its own worker")
	return pids
}

// onWorker1 leaves a call running on the pool's worker 1 (of 2), and
// returns the function that ends it and waits for its pid.
func onWorker1(t *testing.T, p *pool.Pool, l *eventLog, dir string) func() (int, error) {
	t.Helper()
	worker := make(map[int]int) // pid → worker
	for _, ev := range l.all(pool.WorkerStarted) {
		worker[ev.PID] = ev.Worker
	}
	a, b := submitAwait(t, p, dir, "long-a"), submitAwait(t, p, dir, "long-b")
	l.logs.waitLog(t, "proc.await-file long-a started")
	l.logs.waitLog(t, "proc.await-file long-b started")
	pidA := awaitPID(t, l, "long-a")
	keep, end, drop := "long-a", "long-b", b
	f := a
	if worker[pidA] != 1 {
		keep, end, drop, f = "long-b", "long-a", a, b
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, end), nil, 0o600))
	_, err := drop.Wait()
	require.NoError(t, err)
	return func() (int, error) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, keep), nil, 0o600))
		return f.Wait()
	}
}

// awaitPID reads from the workers' log the pid of the call named name.
func awaitPID(t *testing.T, l *eventLog, name string) int {
	t.Helper()
	m := regexp.MustCompile(`proc.await-file ` + name + ` started pid=(\d+)`).FindStringSubmatch(l.logs.String())
	require.NotNil(t, m)
	pid, err := strconv.Atoi(m[1])
	require.NoError(t, err)
	return pid
}

// submitAwait submits a call that holds its worker until the file name in
// dir exists.
func submitAwait(t *testing.T, p *pool.Pool, dir, name string) *pool.Future[int] {
	t.Helper()
	f, err := pool.Submit(testCtx(t), p, procAwaitFile, filepath.Join(dir, name))
	require.NoError(t, err)
	return f
}

// all returns the events of kind so far.
func (l *eventLog) all(kind pool.WorkerEventKind) []pool.WorkerEvent {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.DeleteFunc(slices.Clone(l.events), func(ev pool.WorkerEvent) bool { return ev.Kind != kind })
}
