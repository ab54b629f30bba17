package natsjobs_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/internal/testkit"
	"github.com/offloadgo/offload/natsjobs"
	"github.com/offloadgo/offload/pool"
)

// The test binary, started with these set, serves queue "jobs" at the
// server's URL (with that Lease) until SIGTERM: a worker service.
const (
	envServeURL   = "NATSJOBS_TEST_SERVE_URL"
	envServeLease = "NATSJOBS_TEST_SERVE_LEASE"
)

// PidIn is how long pid takes: in a worker service process, and here.
type PidIn struct{ There, Here time.Duration }

// pid answers with the pid of the process that ran it, once its time
// there or here has passed (or when its ctx ends).
var pid = pool.Register("natsjobs.pid", func(ctx context.Context, in PidIn) (int, error) {
	d := in.Here
	if os.Getenv(envServeURL) != "" {
		d = in.There
	}
	select {
	case <-time.After(d):
		return os.Getpid(), nil
	case <-ctx.Done():
		return 0, context.Cause(ctx)
	}
})

// ranSubject hears, from counted, the key of each run.
const ranSubject = "natsjobs.test.ran"

// reportTo is a worker service's connection, on which counted reports.
var reportTo *nats.Conn

// counted reports its run, by in.Key, after in.Sleep.
var counted = pool.Register("natsjobs.counted", func(ctx context.Context, in Keyed) (string, error) {
	time.Sleep(in.Sleep)
	if reportTo != nil {
		_ = reportTo.Publish(ranSubject, []byte(in.Key))
	}
	return in.Key, nil
})

func serveProcess(url string) int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	lease, _ := time.ParseDuration(os.Getenv(envServeLease))
	nc, err := nats.Connect(url)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer nc.Close()
	reportTo = nc
	q, err := natsjobs.Open(ctx, nc, natsjobs.Options{Name: "jobs", Lease: lease,
		Backoff: func(int, error) time.Duration { return 10 * time.Millisecond }})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer q.Close()
	p, err := pool.New(pool.Options{Workers: 1})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer p.Close()
	if err := natsjobs.Serve(ctx, q, p, natsjobs.ServeOptions{Drain: 10 * time.Second}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// startServeProcess starts the test binary as a worker service; the test
// ends it (SIGKILL if it's still there) and reaps it.
func startServeProcess(t *testing.T, url string, lease time.Duration) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envServeURL+"="+url, envServeLease+"="+lease.String())
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return cmd
}

// waitRunning waits until job id runs its attempt n.
func waitRunning(t *testing.T, q *natsjobs.Queue, id natsjobs.ID, n int) {
	t.Helper()
	require.Eventually(t, func() bool {
		st, err := q.Status(testkit.Ctx(t), id)
		return err == nil && st.State == natsjobs.Running && st.Attempt == n
	}, 30*time.Second, 5*time.Millisecond, "attempt %d of job %s running", n, id)
}
