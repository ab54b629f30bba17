package pool_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/internal/testkit"
	"github.com/offloadgo/offload/pool"
)

// procAwaitFile holds its worker process until the file named by its input
// exists, announcing on stdout that it started and in which process: the
// test's signal across the process boundary.
var procAwaitFile = pool.Register("proc.await-file", func(ctx context.Context, path string) (int, error) {
	fmt.Printf("proc.await-file %s started pid=%d\n", filepath.Base(path), os.Getpid())
	for {
		if _, err := os.Stat(path); err == nil {
			return os.Getpid(), nil
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(time.Millisecond):
		}
	}
})

// A Subprocess pool starts worker processes for the tasks queued when
// Workers grows, and when it shrinks stops the idle ones at once and the
// busy ones as their tasks return, without interrupting them. Not
// parallel: it counts the test process's children.
func TestSetWorkersSubprocess(t *testing.T) {
	requireSubprocess(t)
	kids := countChildren(t)
	dir := t.TempDir()
	p, log := newProcPool(t, pool.Options{Workers: 1, MinWorkers: 1, MaxQueue: 8})
	ctx := testCtx(t)
	submit := func(name string) *pool.Future[int] {
		t.Helper()
		f, err := pool.Submit(ctx, p, procAwaitFile, filepath.Join(dir, name))
		require.NoError(t, err)
		return f
	}
	release := func(name string) {
		t.Helper()
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), nil, 0o600))
	}
	a, b, c := submit("a"), submit("b"), submit("c")
	log.waitLog(t, "proc.await-file a started")
	assert.Equal(t, 2, p.Stats().Queued)

	require.NoError(t, p.SetWorkers(4))
	log.waitLog(t, "proc.await-file b started")
	log.waitLog(t, "proc.await-file c started")
	st := p.Stats()
	assert.Equal(t, 3, st.Workers, "a process for each queued task, none for nothing")
	assert.Equal(t, 3, st.Busy)
	require.Eventually(t, func() bool { return countChildren(t)-kids == 3 }, 10*time.Second, time.Millisecond,
		"three worker processes")

	idle, err := pool.Run(ctx, p, procPID, struct{}{})
	require.NoError(t, err, "a fourth process serves while three are busy")
	assert.Equal(t, 4, p.Stats().Workers)

	require.NoError(t, p.SetWorkers(1))
	require.Eventually(t, func() bool { return p.Stats().Workers == 3 }, 10*time.Second, time.Millisecond,
		"the idle worker exits at once")
	require.Eventually(t, func() bool { return testkit.ProcessReaped(idle) }, 10*time.Second, time.Millisecond,
		"and its process %d with it", idle)
	d := submit("d") // queued: three tasks still run, and one worker is kept

	release("a")
	pidA, err := a.Wait()
	require.NoError(t, err, "a running task is not interrupted")
	release("b")
	pidB, err := b.Wait()
	require.NoError(t, err)
	st = p.Stats()
	assert.Equal(t, 1, st.Queued, "d waits for the one worker kept")
	assert.Equal(t, 1, st.Busy)
	release("c")
	pidC, err := c.Wait()
	require.NoError(t, err)
	log.waitLog(t, fmt.Sprintf("proc.await-file d started pid=%d", pidC))
	release("d")
	pidD, err := d.Wait()
	require.NoError(t, err)
	assert.Equal(t, pidC, pidD, "d ran on the process kept")
	for _, pid := range []int{pidA, pidB} {
		require.Eventually(t, func() bool { return testkit.ProcessReaped(pid) }, 10*time.Second, time.Millisecond,
			"the process %d of a worker above the limit exits once its task returns", pid)
	}
	assert.Equal(t, 1, p.Stats().Workers)
	require.Eventually(t, func() bool { return countChildren(t)-kids == 1 }, 10*time.Second, time.Millisecond,
		"one worker process left")
	assert.EqualValues(t, 5, p.Stats().Completed)
}
