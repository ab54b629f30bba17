//go:build unix

package testkit

import (
	"os/exec"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A child that has exited but is not yet reaped is a zombie: it has
// exited (on Linux, where /proc tells) but is not reaped; once waited
// for, it is both.
func TestProcessExitedAndReapedDiffer(t *testing.T) {
	cmd := exec.Command("/bin/sh", "-c", "exit 0")
	require.NoError(t, cmd.Start())
	pid := cmd.Process.Pid
	if runtime.GOOS == "linux" {
		require.Eventually(t, func() bool { return ProcessExited(pid) }, 10*time.Second, time.Millisecond,
			"the child exits, a zombie until reaped")
		assert.False(t, ProcessReaped(pid), "a zombie still exists")
		state, ok := ProcState(pid)
		assert.True(t, ok)
		assert.Equal(t, byte('Z'), state)
	}
	require.NoError(t, cmd.Wait())
	assert.True(t, ProcessReaped(pid))
	assert.True(t, ProcessExited(pid))
}
