//go:build linux

package workerproc

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/offloadgo/offload/cancel"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCrashAccounts: each way a worker can die gives the right account.
func TestCrashAccounts(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		kind   byte
		spec   Spec
		code   int
		signal syscall.Signal
		killed cancel.KillReason
		crash  string   // Exit.Crash
		msg    []string // in Exit.Error()
		body   string   // of the frame sent
		notMsg []string // not in Exit.Error()
	}{
		{"os.Exit(3)", kindExit3, Spec{}, 3, 0, cancel.NotKilled, "",
			[]string{"exited with status 3; stderr: exiting with status 3"}, "", nil},
		{"nil dereference", kindNilDeref, Spec{}, 2, 0, cancel.NotKilled,
			"panic: runtime error: invalid memory address or nil pointer dereference [signal SIGSEGV",
			[]string{"exited with status 2", "nil pointer dereference"}, "", nil},
		{"panic on a goroutine", kindGoPanic, Spec{}, 2, 0, cancel.NotKilled, "panic: boom on a goroutine",
			[]string{"exited with status 2", "panic: boom on a goroutine"}, "", nil},
		{"fatal runtime error", kindFatal, Spec{}, 2, 0, cancel.NotKilled, "fatal error: sync: unlock of unlocked mutex",
			[]string{"exited with status 2", "fatal error: sync: unlock of unlocked mutex"}, "", nil},
		{"crash traceback", kindAbort, Spec{}, -1, syscall.SIGABRT, cancel.NotKilled, "panic: abort",
			[]string{"was killed by signal SIGABRT; panic: abort; stderr: "}, "", nil},
		{"memory limit", kindAlloc, Spec{MemoryLimit: 256 << 20}, -1, syscall.SIGKILL, cancel.KilledByMemoryLimit, "",
			[]string{"exceeded memory limit 256 MiB (rss "}, "", nil},
		// A task can print what it likes: only the runtime's own report,
		// a headline then a goroutine trace, in a process that exited with
		// status 2 or by a signal, makes a crash headline.
		{"a task prints a panic line", kindStderrExit, Spec{}, 3, 0, cancel.NotKilled, "",
			[]string{"exited with status 3; stderr: panic: fake"}, "3\npanic: fake\n", nil},
		{"a task prints a panic line that scrolls out", kindStderrExit, Spec{}, 3, 0, cancel.NotKilled, "",
			[]string{"exited with status 3; stderr: line 1\n"}, "3\npanic: fake\n" + numberedLines(tailLines), []string{"panic: fake"}},
		{"a task prints a whole crash report", kindStderrExit, Spec{}, 3, 0, cancel.NotKilled, "",
			[]string{"exited with status 3; stderr: panic: fake"}, "3\npanic: fake\n\ngoroutine 1 [running]:\nmain.main()\n", nil},
		{"a task prints a headline and exits with status 2", kindStderrExit, Spec{}, 2, 0, cancel.NotKilled, "",
			[]string{"exited with status 2; stderr: fatal error: fake\nthe end"}, "2\nfatal error: fake\nthe end\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.spec.ID = 5
			p := startWorker(t, tt.spec)
			require.NoError(t, p.Conn().WriteFrame(Frame{Kind: tt.kind, Body: []byte(tt.body)}))
			_, err := p.Conn().ReadFrame()
			require.ErrorIs(t, err, io.EOF)
			e := waitDone(t, p)
			assert.Equal(t, tt.code, e.Code)
			assert.Equal(t, tt.signal, e.Signal)
			assert.Equal(t, tt.killed, e.Killed)
			if tt.crash == "" {
				assert.Empty(t, e.Crash)
			} else {
				assert.True(t, strings.HasPrefix(e.Crash, tt.crash), "crash line %q", e.Crash)
			}
			for _, msg := range tt.msg {
				assert.Contains(t, e.Error(), msg)
			}
			for _, msg := range tt.notMsg {
				assert.NotContains(t, e.Error(), msg)
			}
			assert.True(t, strings.HasPrefix(e.Error(), "cancel: worker 5 (pid "+strconv.Itoa(p.PID())+") "), e.Error())
			assert.False(t, e.Success())
			if tt.killed == cancel.KilledByMemoryLimit {
				assert.Greater(t, e.RSS, tt.spec.MemoryLimit)
				assert.Equal(t, tt.spec.MemoryLimit, e.MemoryLimit)
			}
			assert.LessOrEqual(t, strings.Count(e.Stderr, "\n"), tailLines-1)
		})
	}
}

func TestExternalKill(t *testing.T) {
	t.Parallel()
	p := startWorker(t, Spec{})
	require.NoError(t, syscall.Kill(p.PID(), syscall.SIGKILL))
	e := waitDone(t, p)
	assert.Equal(t, cancel.NotKilled, e.Killed, "the supervisor did not kill it")
	assert.Equal(t, syscall.SIGKILL, e.Signal)
	assert.Contains(t, e.Error(), "was killed by signal SIGKILL")
}

func TestGOMEMLIMITIsSet(t *testing.T) {
	t.Parallel()
	s := Spec{MemoryLimit: 64 << 20}
	env := s.environ(1)
	assert.Contains(t, env, "GOMEMLIMIT=67108864")
	s.Env = []string{"GOMEMLIMIT=1GiB"}
	assert.NotContains(t, s.environ(1), "GOMEMLIMIT=67108864", "the caller's own GOMEMLIMIT wins")
}

// numberedLines returns "line 1\n" to "line n\n".
func numberedLines(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	return b.String()
}
