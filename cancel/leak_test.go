//go:build linux

package cancel

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestNoLeaks: not parallel, so that the descriptor count is this test's
// alone. Every way a worker ends leaves no descriptor and no process
// (goroutines are checked by goleak in TestMain).
func TestNoLeaks(t *testing.T) {
	before := openFDs(t)
	var pids []int
	ends := []func(p *Process){
		func(p *Process) { p.Close() },
		func(p *Process) { p.Kill(); <-p.Done(); p.Close() },
		func(p *Process) { p.Conn().WriteFrame(Frame{Kind: kindExit3}); <-p.Done(); p.Close() },
		func(p *Process) {
			p.Conn().WriteFrame(Frame{Kind: kindPrint, Body: []byte("output\n")})
			p.Conn().ReadFrame()
			p.Close()
		},
	}
	for _, end := range ends {
		p, err := Start(context.Background(), Spec{Logger: quietLogger(t), MemoryLimit: 1 << 30, CloseGrace: 100 * time.Millisecond})
		require.NoError(t, err)
		pids = append(pids, p.PID())
		end(p)
	}
	_, err := Start(context.Background(), Spec{Path: "/bin/sh", Args: []string{"-c", "exit 1"}, Logger: quietLogger(t)})
	require.Error(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err = Start(ctx, Spec{Env: []string{envNoHello + "=1"}, Logger: quietLogger(t)})
	require.True(t, errors.Is(err, context.DeadlineExceeded), "%v", err)

	assert.Equal(t, before, openFDs(t), "descriptors left open")
	for _, pid := range pids {
		assert.True(t, processGone(pid), "worker %d still running", pid)
	}
}

func TestWithCause(t *testing.T) {
	t.Parallel()
	errTerminated := errors.New("pool: task terminated")
	err := WithCause(errTerminated, context.DeadlineExceeded)
	assert.ErrorIs(t, err, errTerminated)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.NotErrorIs(t, err, context.Canceled)
	assert.Equal(t, "pool: task terminated: context deadline exceeded", err.Error())

	exit := &Exit{ID: 1, PID: 2, Code: 3}
	var got *Exit
	require.ErrorAs(t, WithCause(errTerminated, exit), &got)
	assert.Same(t, exit, got)

	assert.Same(t, errTerminated, WithCause(errTerminated, nil))
	assert.Equal(t, context.Canceled, WithCause(nil, context.Canceled))
}

func TestExitMessages(t *testing.T) {
	t.Parallel()
	tests := []struct {
		exit Exit
		want string
	}{
		{Exit{ID: 3, PID: 1234, Code: 3, Stderr: "bye"}, "cancel: worker 3 (pid 1234) exited with status 3; stderr: bye"},
		{Exit{ID: 3, PID: 1234, Code: -1, Signal: 11}, "cancel: worker 3 (pid 1234) was killed by signal SIGSEGV"},
		{Exit{ID: 3, PID: 1234, Code: -1, Signal: 9, Killed: KilledByMemoryLimit, MemoryLimit: 64 << 20, RSS: 70 << 20},
			"cancel: worker 3 (pid 1234) exceeded memory limit 64 MiB (rss 70 MiB) and was killed"},
		{Exit{ID: 3, PID: 1234, Code: -1, Signal: 9, Killed: KilledByTerminate}, "cancel: worker 3 (pid 1234) was killed by its supervisor (terminate)"},
		{Exit{ID: 0, PID: 9, Code: 2, Crash: "panic: x", Stderr: "goroutine 1"}, "cancel: worker 0 (pid 9) exited with status 2; panic: x; stderr: goroutine 1"},
		{Exit{ID: 0, PID: 9, Code: 2, Crash: "panic: x", Stderr: "panic: x"}, "cancel: worker 0 (pid 9) exited with status 2; stderr: panic: x"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, tt.exit.Error())
	}
	assert.True(t, (&Exit{}).Success())
	assert.Equal(t, "1.5 KiB", formatBytes(1536))
	assert.Equal(t, "70.5 MiB", formatBytes(70<<20+512<<10))
	assert.Equal(t, "2 GiB", formatBytes(2<<30))
	assert.Equal(t, "memory limit", KilledByMemoryLimit.String())
}
