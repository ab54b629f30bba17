//go:build linux

package cancel

import (
	"io"
	"strconv"
	"strings"
	"syscall"
	"testing"

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
		killed KillReason
		crash  string   // Exit.Crash
		msg    []string // in Exit.Error()
	}{
		{"os.Exit(3)", kindExit3, Spec{}, 3, 0, NotKilled, "",
			[]string{"exited with status 3; stderr: exiting with status 3"}},
		{"nil dereference", kindNilDeref, Spec{}, 2, 0, NotKilled,
			"panic: runtime error: invalid memory address or nil pointer dereference [signal SIGSEGV",
			[]string{"exited with status 2", "nil pointer dereference"}},
		{"panic on a goroutine", kindGoPanic, Spec{}, 2, 0, NotKilled, "panic: boom on a goroutine",
			[]string{"exited with status 2", "panic: boom on a goroutine"}},
		{"fatal runtime error", kindFatal, Spec{}, 2, 0, NotKilled, "fatal error: sync: unlock of unlocked mutex",
			[]string{"exited with status 2", "fatal error: sync: unlock of unlocked mutex"}},
		{"crash traceback", kindAbort, Spec{}, -1, syscall.SIGABRT, NotKilled, "panic: abort",
			[]string{"was killed by signal SIGABRT; panic: abort; stderr: "}},
		{"memory limit", kindAlloc, Spec{MemoryLimit: 256 << 20}, -1, syscall.SIGKILL, KilledByMemoryLimit, "",
			[]string{"exceeded memory limit 256 MiB (rss "}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.spec.ID = 5
			p := startWorker(t, tt.spec)
			require.NoError(t, p.Conn().WriteFrame(Frame{Kind: tt.kind}))
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
			assert.True(t, strings.HasPrefix(e.Error(), "cancel: worker 5 (pid "+strconv.Itoa(p.PID())+") "), e.Error())
			assert.False(t, e.Success())
			if tt.killed == KilledByMemoryLimit {
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
	assert.Equal(t, NotKilled, e.Killed, "the supervisor did not kill it")
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
