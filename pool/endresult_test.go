package pool_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/pool"
)

// quitter returns a success as soon as its ctx ends, as a task that stops
// early and reports what it has may do.
var quitter = pool.Register("test.quitter", func(ctx context.Context, started chan struct{}) (int, error) {
	close(started)
	<-ctx.Done()
	return 1, nil
})

// A running task that returns because its caller's ctx ended must not win
// the caller's future with that result: the caller gets the ctx error,
// every time. The same holds for the pool's own end (Close).
func TestTaskEndedByCtxNeverWinsItsFuture(t *testing.T) {
	p := newPool(t, pool.Options{Workers: 1})
	for range 200 {
		ctx, cancel := context.WithCancel(context.Background())
		started := make(chan struct{})
		f, err := pool.Submit(ctx, p, quitter, started)
		require.NoError(t, err)
		<-started
		cancel()
		out, err := f.Wait()
		require.ErrorIs(t, err, context.Canceled)
		assert.Zero(t, out)
	}
	for range 200 {
		ctx, cancel := context.WithCancel(context.Background())
		started := make(chan struct{})
		go func() { <-started; cancel() }()
		out, err := pool.Run(ctx, p, quitter, started)
		require.ErrorIs(t, err, context.Canceled)
		assert.Zero(t, out)
	}
	// The worker is free again: nothing was left running.
	require.Eventually(t, func() bool { return p.Stats().Busy == 0 }, 5*time.Second, time.Millisecond)

	q := newPool(t, pool.Options{Workers: 1})
	started := make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f, err := pool.Submit(ctx, q, quitter, started)
	require.NoError(t, err)
	<-started
	require.NoError(t, q.Close())
	_, err = f.Wait()
	require.ErrorIs(t, err, pool.ErrClosed)
}
