//go:build unix

package pool_test

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"syscall"
	"testing"

	"github.com/offloadgo/offload/pool"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A worker process that dies right after it replied fails no other task:
// the next call goes to its replacement, and the death counts as a crash.
// The death comes from a stray goroutine of the task that closes the
// channel (the process notices only when the next call arrives) or panics
// (the test waits for the process to be gone, unbeknown to the pool).
func TestLateDeathFailsNoTask(t *testing.T) {
	t.Parallel()
	for _, how := range []string{"close-channel", "stray-panic"} {
		t.Run(how, func(t *testing.T) {
			t.Parallel()
			p, _ := newProcPool(t, pool.Options{Workers: 1})
			ctx := testCtx(t)
			const n = 15
			early := 0 // rounds whose death came before the reply after all
			for i := range n {
				pid, err := pool.Run(ctx, p, dieAfterReply, how)
				if how == "close-channel" && errors.Is(err, pool.ErrWorkerCrashed) {
					// Under CPU load the task can outlast the worker's 1 ms
					// reader delay, and a new reader then meets the closed
					// channel: the death fails this task, rightly, and the
					// round shows nothing about a late one.
					t.Logf("round %d: the worker died before its reply: %v", i, err)
					early++
				} else {
					require.NoError(t, err, "round %d", i)
					if how == "stray-panic" {
						require.NoError(t, syscall.Kill(pid, syscall.SIGUSR1)) // the reply is in: now panic
						waitGone(t, pid)
					}
				}
				next, err := pool.Run(ctx, p, procPID, struct{}{})
				require.NoError(t, err, "round %d: the next task is not blamed for the death", i)
				assert.NotEqual(t, pid, next)
			}
			assert.Less(t, early, n/2, "most deaths come after the reply")
			st := p.Stats()
			assert.EqualValues(t, 2*n-early, st.Completed, "%+v", st)
			assert.EqualValues(t, early, st.Failed, "%+v", st)
			assert.EqualValues(t, n, st.Crashed, "every death is counted once: %+v", st)
		})
	}
}

// dieAfterReply returns its pid and dooms its worker process: it closes
// the channel's read end (nothing reads it while the task runs; the
// process fails its next read, after this reply and before the next call),
// or leaves a goroutine that panics when the test, having the reply,
// sends the process SIGUSR1.
var dieAfterReply = pool.Register("test.die-after-reply", func(_ context.Context, how string) (int, error) {
	switch how {
	case "close-channel":
		os.NewFile(3, "channel").Close()
	case "stray-panic":
		usr1 := make(chan os.Signal, 1)
		signal.Notify(usr1, syscall.SIGUSR1)
		go func() {
			<-usr1
			panic("a stray goroutine panics after its task returned")
		}()
	}
	return os.Getpid(), nil
})
