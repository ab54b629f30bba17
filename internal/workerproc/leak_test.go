//go:build linux

package workerproc

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/internal/testkit"
)

// TestNoLeaks: not parallel, so that the descriptor count is this test's
// alone. Every way a worker ends leaves no descriptor and no process
// (goroutines are checked by goleak in TestMain).
func TestNoLeaks(t *testing.T) {
	requirePair(t)
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
		assert.True(t, testkit.ProcessExited(pid), "worker %d still running", pid)
	}
}
