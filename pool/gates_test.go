package pool_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/pool"
)

// gates returns n gate inputs with ids from first on, all held by release
// and reporting their start on started.
func gates(first, n int, started chan<- int, release <-chan struct{}, honorCtx bool) []gate {
	ins := make([]gate, n)
	for i := range ins {
		ins[i] = gate{id: first + i, started: started, release: release, honorCtx: honorCtx}
	}
	return ins
}

// submitEach submits the wait task once for each of ins, in order, one
// Submit at a time, and returns their futures; a refused submission fails
// t.
func submitEach(t *testing.T, ctx context.Context, p *pool.Pool, ins []gate) []*pool.Future[int] {
	t.Helper()
	futures := make([]*pool.Future[int], 0, len(ins))
	for i, in := range ins {
		f, err := pool.Submit(ctx, p, wait, in)
		require.NoError(t, err, "submission %d of %d", i+1, len(ins))
		futures = append(futures, f)
	}
	return futures
}

// requireIDs waits for each of futures in order and requires it to
// succeed with its gate's id, first for the first: what wait answers for
// gates(first, ...).
func requireIDs(t *testing.T, futures []*pool.Future[int], first int) {
	t.Helper()
	for i, f := range futures {
		out, err := f.Wait()
		require.NoError(t, err, "future %d of %d", i+1, len(futures))
		require.Equal(t, first+i, out, "future %d of %d", i+1, len(futures))
	}
}
