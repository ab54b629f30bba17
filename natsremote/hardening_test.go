package natsremote_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/natsremote"
	"github.com/offloadgo/offload/natsremote/embedded"
	"github.com/offloadgo/offload/pool"
)

// panicCtx is a ctx whose method named method panics.
type panicCtx struct {
	context.Context
	method string
}

func (c panicCtx) Done() <-chan struct{} {
	if c.method == "Done" {
		panic("panicCtx: Done")
	}
	return c.Context.Done()
}

func (c panicCtx) Err() error {
	if c.method == "Err" {
		panic("panicCtx: Err")
	}
	return c.Context.Err()
}

func (c panicCtx) Value(key any) any {
	if c.method == "Value" {
		panic("panicCtx: Value")
	}
	return c.Context.Value(key)
}

func (c panicCtx) Deadline() (time.Time, bool) {
	if c.method == "Deadline" {
		panic("panicCtx: Deadline")
	}
	return c.Context.Deadline()
}

// A ctx whose methods panic fails its own call on a Remote pool — the
// panic reaches its caller — and never a pool worker: the process lives
// on, and so does the pool.
func TestBadContextFailsItsOwnCall(t *testing.T) {
	t.Parallel()
	s := startServer(t, embedded.Options{})
	serve(t, s, natsremote.ServeOptions{Pool: "bad-ctx", Local: pool.Options{Workers: 2}})
	p := remotePool(t, connect(t, s), "bad-ctx", pool.Options{Workers: 2})
	waitNodes(t, p, 1)
	for _, method := range []string{"Done", "Err", "Value", "Deadline"} {
		for _, cancellable := range []bool{true, false} {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			base := context.WithValue(context.Background(), panicCtx{}, 1)
			if cancellable {
				base = ctx
			}
			bad := panicCtx{Context: base, method: method}
			func() {
				defer func() { _ = recover() }()
				_, _ = pool.Run(bad, p, add, [2]int{1, 2})
			}()
			cancel()
		}
	}
	out, err := pool.Run(testCtx(t), p, add, [2]int{2, 3})
	require.NoError(t, err)
	assert.Equal(t, 5, out)
	assert.Zero(t, p.Load().Busy)
}
