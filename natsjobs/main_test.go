package natsjobs_test

import (
	"context"
	"log/slog"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/offloadgo/offload/internal/jobstest"
	"github.com/offloadgo/offload/internal/testkit"
	"github.com/offloadgo/offload/natsjobs"
	"github.com/offloadgo/offload/natsremote/embedded"
	"github.com/offloadgo/offload/pool"
)

func TestMain(m *testing.M) {
	pool.Main() // the test binary is also a Subprocess pool's worker
	if url := os.Getenv(envServeURL); url != "" {
		os.Exit(serveProcess(url)) // and a worker service (process_test.go)
	}
	goleak.VerifyTestMain(m, testkit.IgnoreSourceSetup)
}

// startJetStream starts a server with JetStream on a store directory of
// the test's, and connects to it.
var startJetStream = jobstest.StartJetStream

// startQueue starts a server as startJetStream does, and opens a queue
// on it as open does.
func startQueue(t *testing.T, o natsjobs.Options) (*natsjobs.Queue, *nats.Conn) {
	t.Helper()
	_, nc := startJetStream(t)
	return open(t, nc, o), nc
}

// startRestartable starts a server with JetStream that listens (for
// other processes, and to be restarted under its clients), and connects
// a client that reconnects for as long as the test runs. The server shuts down after
// the test's later cleanups (a Serve's end).
func startRestartable(t *testing.T) (*embedded.Server, *nats.Conn) {
	t.Helper()
	s, err := embedded.Start(embedded.Options{Listen: true, StoreDir: t.TempDir()})
	require.NoError(t, err)
	t.Cleanup(s.Shutdown)
	nc, err := nats.Connect(s.ClientURL(), nats.MaxReconnects(-1), nats.ReconnectWait(10*time.Millisecond))
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	return s, nc
}

// restart restarts s and waits until nc is connected again.
func restart(t *testing.T, s *embedded.Server, nc *nats.Conn) {
	t.Helper()
	require.NoError(t, s.Restart())
	require.Eventually(t, nc.IsConnected, 20*time.Second, 10*time.Millisecond)
}

// open opens a queue with fast retries unless o says otherwise.
func open(t *testing.T, nc *nats.Conn, o natsjobs.Options) *natsjobs.Queue {
	t.Helper()
	if o.Name == "" {
		o.Name = "jobs"
	}
	if o.Backoff == nil {
		o.Backoff = func(int, error) time.Duration { return 10 * time.Millisecond }
	}
	q, err := natsjobs.Open(testkit.Ctx(t), nc, o)
	require.NoError(t, err)
	t.Cleanup(func() { _ = q.Close() })
	return q
}

// newPool makes a pool that logs nothing (a killed worker is expected).
func newPool(t *testing.T, o pool.Options) *pool.Pool {
	t.Helper()
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	p, err := pool.New(o)
	testkit.SkipUnsupported(t, err) // Subprocess, where worker processes don't run
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Close() })
	return p
}

// serve runs Serve until the test ends.
func serve(t *testing.T, q *natsjobs.Queue, p *pool.Pool, o natsjobs.ServeOptions) {
	t.Helper()
	serveStoppable(t, q, p, o)
}

// serveStoppable runs Serve until stop is called, or the test ends; stop
// ends Serve's ctx and requires that Serve returns no error.
func serveStoppable(t *testing.T, q *natsjobs.Queue, p *pool.Pool, o natsjobs.ServeOptions) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- natsjobs.Serve(ctx, q, p, o) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			require.NoError(t, <-done)
		})
	}
	t.Cleanup(stop)
	return stop
}
