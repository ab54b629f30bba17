package natsremote_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/internal/ctxattack"
	"github.com/offloadgo/offload/internal/testkit"
	"github.com/offloadgo/offload/pool"
)

// A ctx whose methods panic fails its own call on a Remote pool — the
// panic reaches its caller — and never a pool worker: the process lives
// on, and so does the pool.
func TestBadContextFailsItsOwnCall(t *testing.T) {
	t.Parallel()
	_, p := oneNodePool(t, "bad-ctx", 2, pool.Options{Workers: 2})
	for _, method := range testkit.Methods {
		for _, cancellable := range []bool{true, false} {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			base := context.WithValue(context.Background(), testkit.PanicCtx{}, 1)
			if cancellable {
				base = ctx
			}
			bad := testkit.PanicCtx{Context: base, Method: method}
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

// A caller's ctx whose methods panic or block, from their 1st call to
// their 6th, fails its own call or panics on its caller's goroutine, and
// never the process or the pool, on a Remote pool too (see the pool's
// test of the same name for the other isolations).
func TestFaultyContextFailsItsOwnCallOnly(t *testing.T) {
	t.Parallel()
	_, p := oneNodePool(t, "faulty-ctx", 1, pool.Options{Workers: 1})
	ctxattack.Attack(t, p)
}
