package cancel

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

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
