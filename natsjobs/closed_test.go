package natsjobs_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/internal/testkit"
	"github.com/offloadgo/offload/natsjobs"
	"github.com/offloadgo/offload/pool"
)

// Serve stops when its pool or its queue closes, and says which.
func TestServeStopsWhenItsPoolOrQueueCloses(t *testing.T) {
	t.Parallel()
	q, _ := startQueue(t, natsjobs.Options{})
	p := newPool(t, pool.Options{Workers: 1})
	done := make(chan error, 1)
	go func() { done <- natsjobs.Serve(context.Background(), q, p, natsjobs.ServeOptions{}) }()
	require.NoError(t, p.Close())
	requireServeEnds(t, done, pool.ErrClosed, "its pool closed")

	p = newPool(t, pool.Options{Workers: 1})
	go func() { done <- natsjobs.Serve(context.Background(), q, p, natsjobs.ServeOptions{}) }()
	// Closed while Serve waits for jobs, its fetch out.
	id, err := natsjobs.Enqueue(testkit.Ctx(t), q, double, Num{1})
	require.NoError(t, err)
	_, err = natsjobs.Wait(testkit.Ctx(t), q, double, id)
	require.NoError(t, err)
	require.NoError(t, q.Close())
	requireServeEnds(t, done, natsjobs.ErrQueueClosed, "its queue closed")
	_, err = natsjobs.Wait(testkit.Ctx(t), q, double, "anyid")
	assert.ErrorIs(t, err, natsjobs.ErrQueueClosed)
}

// requireServeEnds requires that the Serve reporting on done returns
// want within 20 s of what happened (which should have ended it).
func requireServeEnds(t *testing.T, done <-chan error, want error, what string) {
	t.Helper()
	select {
	case err := <-done:
		assert.ErrorIs(t, err, want)
	case <-time.After(20 * time.Second):
		t.Fatalf("Serve went on after %s", what)
	}
}
