package pool_test

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/internal/workerproc"
	"github.com/offloadgo/offload/pool"
)

// envForgetMain makes a worker process of this test binary behave as a
// service's binary that doesn't call pool.Main first: "exit" fails the
// way a server whose port is taken does, "serve" serves forever.
const envForgetMain = "OFFLOAD_TEST_FORGET_MAIN"

// The check runs at init, before TestMain calls pool.Main: the code a
// forgetful main runs in its worker processes.
func init() {
	if os.Getenv(workerproc.EnvWorker) != "1" {
		return
	}
	switch os.Getenv(envForgetMain) {
	case "exit":
		fmt.Fprintln(os.Stderr, "listen tcp :8080: bind: address already in use")
		os.Exit(1)
	case "serve":
		select {}
	}
}

// A worker process that never says hello fails the task with
// ErrWorkerStartFailed, which tells that nothing ran and how to fix the
// likeliest cause; not ErrWorkerCrashed, which says the task may have run.
func TestSubprocessWorkerThatForgotMain(t *testing.T) {
	for _, tt := range []struct {
		mode, want string
		timeout    time.Duration
	}{
		{"exit", "exited with status 1", 0},
		{"serve", "sent no hello in time", time.Second},
	} {
		t.Run(tt.mode, func(t *testing.T) {
			t.Setenv(envForgetMain, tt.mode) // the workers' environment: not parallel
			p, _ := newProcPool(t, pool.Options{Workers: 1, Subprocess: pool.SubprocessOptions{StartTimeout: tt.timeout}})
			_, err := pool.Run(testCtx(t), p, procPID, struct{}{})
			require.ErrorIs(t, err, pool.ErrWorkerStartFailed)
			assert.NotErrorIs(t, err, pool.ErrWorkerCrashed)
			assert.Contains(t, err.Error(), tt.want)
			assert.Contains(t, err.Error(), "pool.Main()")
			t.Log(err)
		})
	}
}
