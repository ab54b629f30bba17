package pool_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/offloadgo/offload/pool"
)

// pipesHoldingBytes reports whether any pipe of this process has bytes
// in it: with the worker stopped, the call frame the pool wrote to it.
func pipesHoldingBytes(t *testing.T) bool {
	t.Helper()
	fds, err := filepath.Glob("/proc/self/fd/*")
	require.NoError(t, err)
	for _, path := range fds {
		target, err := os.Readlink(path)
		if err != nil || !strings.HasPrefix(target, "pipe:") {
			continue
		}
		fd, err := strconv.Atoi(filepath.Base(path))
		require.NoError(t, err)
		if n, err := unix.IoctlGetInt(fd, unix.TIOCINQ); err == nil && n > 0 {
			return true
		}
	}
	return false
}

// stopped reports whether every thread of process pid is stopped: a
// thread that is not yet could still read a frame whole.
func stopped(t *testing.T, pid int) bool {
	t.Helper()
	stats, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/stat", pid))
	require.NoError(t, err)
	for _, path := range stats {
		b, err := os.ReadFile(path)
		if err != nil {
			return false
		}
		// The state follows the command name, which is in parentheses.
		rest := string(b[bytes.LastIndexByte(b, ')')+1:])
		if f := strings.Fields(rest); len(f) == 0 || f[0] != "T" {
			return false
		}
	}
	return len(stats) > 0
}

// TestSubprocessUnreadCallTakesBackAWorkersBuffer: a call that sends a
// Buffer a worker made back to a worker process, which dies before it
// reads the call, goes to another process with that Buffer, moved, not
// copied (issue 35, item 5: the parent holds such a Buffer as its own).
func TestSubprocessUnreadCallTakesBackAWorkersBuffer(t *testing.T) {
	p, _ := newProcPool(t, pool.Options{Workers: 1})
	ctx := testCtx(t)
	made, err := pool.Run(ctx, p, makeBuffer, 4096)
	require.NoError(t, err)
	first := &made.Bytes()[0]
	pid, err := pool.Run(ctx, p, workerPID, 0)
	require.NoError(t, err)
	require.False(t, pipesHoldingBytes(t))

	require.NoError(t, unix.Kill(pid, unix.SIGSTOP))
	require.Eventually(t, func() bool { return stopped(t, pid) }, 30*time.Second, time.Millisecond)
	future, err := pool.Submit(ctx, p, echoBuffer, made)
	require.NoError(t, err)
	require.Eventually(t, func() bool { return pipesHoldingBytes(t) }, 30*time.Second, time.Millisecond,
		"the call frame reaches the stopped worker's pipe")
	require.NoError(t, unix.Kill(pid, unix.SIGKILL))

	back, err := future.Wait()
	require.NoError(t, err, "the unread call goes to another worker process")
	defer back.Release()
	assert.Same(t, first, &back.Bytes()[0], "the Buffer moved there and back")
	assert.Zero(t, madeOverwritten(back.Bytes()))
	again, err := pool.Run(ctx, p, workerPID, 0)
	require.NoError(t, err)
	assert.NotEqual(t, pid, again)
}
