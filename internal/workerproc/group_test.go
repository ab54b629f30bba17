//go:build linux

package workerproc

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/offloadgo/offload/cancel"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// groupExitBound is how long a killed descendant may take to exit: only a
// generous bound against a loaded machine, far below the grandchild's own
// 30 s sleep.
const groupExitBound = 10 * time.Second

// watchProcess opens a pidfd for pid, which must not have been reaped yet,
// so that its exit can be awaited without any risk of pid reuse. At cleanup
// it kills the process (a no-op if it is gone: a failing test leaves
// nothing behind) and closes the pidfd.
func watchProcess(t testing.TB, pid int) int {
	t.Helper()
	fd, err := unix.PidfdOpen(pid, 0)
	require.NoError(t, err, "pidfd of %d", pid)
	t.Cleanup(func() {
		unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0)
		unix.Close(fd)
	})
	return fd
}

// requireExits waits until the process behind pidfd has exited (a zombie
// counts: a pidfd turns readable once the process has exited, whoever
// reaps it).
func requireExits(t testing.TB, pidfd int, what string) {
	t.Helper()
	deadline := time.Now().Add(groupExitBound)
	for {
		left := time.Until(deadline)
		if left <= 0 {
			t.Fatalf("%s still running after %v", what, groupExitBound)
		}
		fds := []unix.PollFd{{Fd: int32(pidfd), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, int(left/time.Millisecond)+1)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		require.NoError(t, err)
		if n > 0 {
			return
		}
	}
}

// spawnGrandchild has the worker start a grandchild that shares its
// stdout and stderr, and returns a pidfd of it.
func spawnGrandchild(t testing.TB, p *Process) int {
	t.Helper()
	got := roundTrip(t, p.Conn(), Frame{Kind: kindSpawn})
	pid, err := strconv.Atoi(string(got.Body))
	require.NoError(t, err, "reply %q", got.Body)
	return watchProcess(t, pid)
}

// TestGrandchildDiesWithWorker: however the worker ends, a process it
// started goes with it, and the account of the end is unchanged.
func TestGrandchildDiesWithWorker(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		spec   Spec
		end    func(p *Process)
		code   int
		signal syscall.Signal
		killed cancel.KillReason
	}{
		{"kill", Spec{}, func(p *Process) { p.Kill() }, -1, syscall.SIGKILL, cancel.KilledByKill},
		{"terminate", Spec{}, func(p *Process) {
			p.Conn().WriteFrame(Frame{Kind: kindHang})
			p.Terminate(20*time.Millisecond, nil)
		}, -1, syscall.SIGKILL, cancel.KilledByTerminate},
		{"close, worker exits at EOF", Spec{}, func(p *Process) { p.Close() }, 0, 0, cancel.NotKilled},
		{"close, worker ignores EOF", Spec{CloseGrace: 20 * time.Millisecond}, func(p *Process) {
			p.Conn().WriteFrame(Frame{Kind: kindHang})
			p.Close()
		}, -1, syscall.SIGKILL, cancel.KilledByClose},
		{"worker exits with status 3", Spec{}, func(p *Process) { p.Conn().WriteFrame(Frame{Kind: kindExit3}) }, 3, 0, cancel.NotKilled},
		{"worker crashes", Spec{}, func(p *Process) { p.Conn().WriteFrame(Frame{Kind: kindGoPanic}) }, 2, 0, cancel.NotKilled},
		{"memory limit", Spec{MemoryLimit: 128 << 20}, func(p *Process) { p.Conn().WriteFrame(Frame{Kind: kindAlloc}) },
			-1, syscall.SIGKILL, cancel.KilledByMemoryLimit},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := startWorker(t, tt.spec)
			grandchild := spawnGrandchild(t, p)
			tt.end(p)
			e := waitDone(t, p)
			requireExits(t, grandchild, "grandchild")
			assert.Equal(t, tt.code, e.Code, "%v", e)
			assert.Equal(t, tt.signal, e.Signal, "%v", e)
			assert.Equal(t, tt.killed, e.Killed, "%v", e)
		})
	}
}

// TestCloseDoesNotWaitForAGrandchildsOutput: Close of a worker whose
// grandchild holds its stdout and stderr returns with the grandchild dead
// and the output at EOF, rather than cutting the output off after
// outputDrain (which the supervisor would log).
func TestCloseDoesNotWaitForAGrandchildsOutput(t *testing.T) {
	t.Parallel()
	var logs logBuffer
	p := startWorker(t, Spec{Logger: logs.logger()})
	grandchild := spawnGrandchild(t, p)
	require.NoError(t, p.Close())
	assert.True(t, p.Exit().Success(), "%v", p.Exit())
	requireExits(t, grandchild, "grandchild")
	assert.NotContains(t, logs.String(), outputCutMessage)
}

// TestSupervisorDeath: when the supervisor dies without closing its
// worker, the worker and the process it started go too. An intermediate
// process (this binary) starts a worker, which starts a grandchild, and
// exits without closing it.
func TestSupervisorDeath(t *testing.T) {
	t.Parallel()
	requirePair(t)
	exe, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.CommandContext(context.Background(), exe)
	cmd.Env = append(os.Environ(), envIntermediate+"=1", "GORACE=atexit_sleep_ms=0")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		stdin.Close()
		t.Fatalf("intermediate failed: %v: %v: %s", err, cmd.Wait(), stderr.Bytes())
	}
	pids := strings.Fields(line)
	require.Len(t, pids, 2, "intermediate printed %q", line)
	var watched [2]int
	for i, s := range pids {
		pid, err := strconv.Atoi(s)
		require.NoError(t, err)
		watched[i] = watchProcess(t, pid)
	}
	stdin.Close() // the intermediate exits
	io.Copy(io.Discard, stdout)
	require.NoError(t, cmd.Wait(), "%s", stderr.Bytes())
	requireExits(t, watched[0], "worker")
	requireExits(t, watched[1], "grandchild")
}
