package natsremote_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/natsremote"
	"github.com/offloadgo/offload/natsremote/embedded"
	"github.com/offloadgo/offload/pool"
)

var (
	// exitWorker ends its worker process with the status it is given.
	exitWorker = pool.Register("nr.exit", func(_ context.Context, status int) (int, error) {
		os.Exit(status)
		return 0, nil
	})
	// bigOutput returns n bytes.
	bigOutput = pool.Register("nr.big-output", func(_ context.Context, n int) ([]byte, error) {
		return make([]byte, n), nil
	})
)

// A crash in a node's worker process, and an output over its MaxPayload,
// reach the caller with their sentinel's text once, then the node, then
// the node's account.
func TestNodeWorkerErrorsSayTheirSentinelOnce(t *testing.T) {
	t.Parallel()
	s := startServer(t, embedded.Options{})
	serve(t, s, natsremote.ServeOptions{Pool: "crashtext", Name: "n1", Local: pool.Options{
		Workers: 1, Isolation: pool.Subprocess, Subprocess: pool.SubprocessOptions{MaxPayload: 1 << 10},
	}})
	p := remotePool(t, connect(t, s), "crashtext", pool.Options{Workers: 1})
	waitNodes(t, p, 1)
	ctx := testCtx(t)

	_, err := pool.Run(ctx, p, exitWorker, 3)
	require.ErrorIs(t, err, pool.ErrWorkerCrashed)
	assert.Equal(t, 1, strings.Count(err.Error(), "worker crashed"), err.Error())
	assert.True(t, strings.HasPrefix(err.Error(), "pool: worker crashed: on node n1-"), err.Error())
	assert.Contains(t, err.Error(), "exited with status 3")
	t.Logf("crash: %v", err)

	_, err = pool.Run(ctx, p, bigOutput, 4<<10)
	require.ErrorIs(t, err, pool.ErrPayloadTooLarge)
	assert.Equal(t, 1, strings.Count(err.Error(), "payload too large"), err.Error())
	t.Logf("too large: %v", err)
}
