package pool_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/internal/testkit"
	"github.com/offloadgo/offload/pool"
)

// pidFromLog is the pid that follows prefix in a worker log.
func pidFromLog(t *testing.T, log, prefix string) int {
	t.Helper()
	i := strings.Index(log, prefix)
	require.GreaterOrEqual(t, i, 0)
	rest := log[i+len(prefix):]
	end := strings.IndexFunc(rest, func(r rune) bool { return r < '0' || r > '9' })
	pid, err := strconv.Atoi(rest[:end])
	require.NoError(t, err)
	return pid
}

// countFDs is how many descriptors the process holds.
func countFDs(t *testing.T) int {
	t.Helper()
	all, _ := testkit.CountFDs(t, "")
	return all
}

// countChildren is how many child processes the test process has.
func countChildren(t *testing.T) int {
	t.Helper()
	testkit.SkipOffLinux(t, "counts child processes in /proc/self/task")
	files, err := filepath.Glob("/proc/self/task/*/children")
	require.NoError(t, err)
	n := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if errors.Is(err, os.ErrNotExist) {
			continue // the thread ended
		}
		require.NoError(t, err)
		n += len(strings.Fields(string(b)))
	}
	return n
}

// requireServedAfterCrash runs add on p, whose one task so far crashed
// its worker: a new worker serves it, and Stats counts the crash as the
// pool's one failure. It returns those Stats for further checks.
func requireServedAfterCrash(t *testing.T, ctx context.Context, p *pool.Pool) pool.Stats {
	t.Helper()
	out, err := pool.Run(ctx, p, add, [2]int{2, 2})
	require.NoError(t, err, "a new worker serves the next task")
	assert.Equal(t, 4, out)
	st := p.Stats()
	assert.EqualValues(t, 1, st.Crashed)
	assert.EqualValues(t, 1, st.Failed)
	return st
}

// requireCloseEnds closes p with running on a worker and queued behind
// it: running ends terminated by the close, queued never runs, and
// Shutdown then waits for the workers to go.
func requireCloseEnds[R, Q any](t *testing.T, ctx context.Context, p *pool.Pool, running *pool.Future[R], queued *pool.Future[Q]) {
	t.Helper()
	require.NoError(t, p.Close())
	_, err := running.Wait()
	require.ErrorIs(t, err, pool.ErrTerminated)
	require.ErrorIs(t, err, pool.ErrClosed)
	_, err = queued.Wait()
	require.ErrorIs(t, err, pool.ErrClosed)
	require.NoError(t, p.Shutdown(ctx), "Shutdown after Close waits for the workers to go")
}
