// Package jobstest runs, for the tests of poolprom and poolotel, a queue
// of durable jobs through the three ends a job can have: one job that
// succeeds, one retried then dead, one canceled.
package jobstest

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/natsjobs"
	"github.com/offloadgo/offload/natsremote/embedded"
	"github.com/offloadgo/offload/pool"
)

// The tasks of the three jobs.
var (
	Echo = pool.Register("jobstest.echo", func(_ context.Context, n int) (int, error) { return n, nil })
	Fail = pool.Register("jobstest.fail", func(context.Context, int) (int, error) { return 0, errors.New("no") })
	// Hold runs until its ctx ends.
	Hold = pool.Register("jobstest.hold", func(ctx context.Context, _ int) (int, error) {
		<-ctx.Done()
		return 0, context.Cause(ctx)
	})
)

// Quiet is a logger for what the tests don't look at.
var Quiet = slog.New(slog.DiscardHandler)

// Queue is a queue named "reports" on a JetStream server of the test's,
// whose events it hears.
type Queue struct {
	*natsjobs.Queue
	mu   sync.Mutex
	ends map[natsjobs.ID]natsjobs.JobEventKind
	came chan struct{}
}

// StartJetStream starts a server with JetStream on a store directory of
// the test's, and connects to it; both end with the test.
func StartJetStream(t *testing.T) (*embedded.Server, *nats.Conn) {
	t.Helper()
	s, err := embedded.Start(embedded.Options{StoreDir: t.TempDir()})
	require.NoError(t, err)
	t.Cleanup(s.Shutdown)
	nc, err := s.Connect()
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	return s, nc
}

// Open starts a JetStream server for the test and opens the queue on it
// with o (Name, Logger, Backoff and OnJobEvent set here).
func Open(t *testing.T, o natsjobs.Options) *Queue {
	t.Helper()
	_, nc := StartJetStream(t)
	q := &Queue{ends: map[natsjobs.ID]natsjobs.JobEventKind{}, came: make(chan struct{}, 1)}
	o.Name, o.Logger, o.OnJobEvent = "reports", Quiet, q.heard
	o.Backoff = func(int, error) time.Duration { return time.Millisecond }
	var err error
	q.Queue, err = natsjobs.Open(t.Context(), nc, o)
	require.NoError(t, err)
	t.Cleanup(func() { _ = q.Close() })
	return q
}

func (q *Queue) heard(ev natsjobs.JobEvent) {
	switch ev.Kind {
	case natsjobs.JobSucceeded, natsjobs.JobDead, natsjobs.JobCanceled:
		q.mu.Lock()
		q.ends[ev.ID] = ev.Kind
		q.mu.Unlock()
		select {
		case q.came <- struct{}{}:
		default:
		}
	}
}

// Serve runs the queue's jobs through p until the test ends.
func (q *Queue) Serve(t *testing.T, p *pool.Pool) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- natsjobs.Serve(ctx, q.Queue, p, natsjobs.ServeOptions{}) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
	})
}

// EnqueueThree enqueues a job of Echo, one of Fail with two attempts,
// and one of Hold, which it cancels while queued.
func (q *Queue) EnqueueThree(t *testing.T) {
	t.Helper()
	ctx := t.Context()
	_, err := natsjobs.Enqueue(ctx, q.Queue, Echo, 1)
	require.NoError(t, err)
	_, err = natsjobs.Enqueue(ctx, q.Queue, Fail, 1, natsjobs.MaxAttempts(2))
	require.NoError(t, err)
	held, err := natsjobs.Enqueue(ctx, q.Queue, Hold, 1)
	require.NoError(t, err)
	require.NoError(t, q.Cancel(ctx, held))
}

// RunThree serves the three jobs EnqueueThree enqueued through a pool
// of two workers, closed when the test ends, and waits for the ends of
// the two that run.
func (q *Queue) RunThree(t *testing.T) {
	t.Helper()
	p, err := pool.New(pool.Options{Workers: 2, Logger: Quiet})
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Close() })
	q.Serve(t, p)
	for {
		q.mu.Lock()
		n := len(q.ends)
		q.mu.Unlock()
		if n == 3 {
			return
		}
		select {
		case <-q.came:
		case <-t.Context().Done():
			t.Fatalf("%d of 3 jobs ended", n)
		}
	}
}
