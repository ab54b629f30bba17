//go:build linux

package workerproc

import (
	"strconv"
	"syscall"
	"testing"

	"github.com/offloadgo/offload/cancel"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMemoryLimitCountsTheTree: memory a worker's child holds, and memfds
// the worker or its child write and keep open without mapping them (which
// no RSS shows), count against the worker's MemoryLimit: the worker is
// killed for them, and the child goes with its process group.
func TestMemoryLimitCountsTheTree(t *testing.T) {
	t.Parallel()
	const limit = 100 << 20
	tests := []struct {
		name  string
		child string // the hog's kind and MiB, or "" for none
		memfd string // MiB the worker writes to a memfd of its own
	}{
		{"a child's anonymous memory", "anon:300", ""},
		{"a child's memfd, never mapped", "memfd:300", ""},
		{"the worker's memfd, never mapped", "", "300"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := startWorker(t, Spec{MemoryLimit: limit})
			var child int
			if tt.child != "" {
				got := roundTrip(t, p.Conn(), Frame{Kind: kindHog, Body: []byte(tt.child)})
				pid, err := strconv.Atoi(string(got.Body))
				require.NoError(t, err, "reply %q", got.Body)
				child = watchProcess(t, pid)
				require.NoError(t, p.Conn().WriteFrame(Frame{Kind: kindHogHold}))
			} else {
				require.NoError(t, p.Conn().WriteFrame(Frame{Kind: kindMemfd, Body: []byte(tt.memfd)}))
			}
			e := waitDone(t, p)
			assert.Equal(t, cancel.KilledByMemoryLimit, e.Killed, "%v", e)
			assert.Equal(t, syscall.SIGKILL, e.Signal, "%v", e)
			assert.Greater(t, e.RSS, int64(limit), "%v", e)
			assert.Contains(t, e.Error(), "exceeded memory limit 100 MiB")
			if tt.child != "" {
				requireExits(t, child, "the worker's child")
			}
		})
	}
}
