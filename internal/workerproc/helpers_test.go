//go:build linux

package workerproc

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/offloadgo/offload/cancel"
	"github.com/offloadgo/offload/internal/testkit"

	"github.com/stretchr/testify/require"
)

func testContext() context.Context { return context.Background() }

// newPair returns both ends of a fresh channel.
func newPair(t testing.TB, max int) (*Conn, *Conn) {
	t.Helper()
	a, b, err := NewPair(max)
	testkit.SkipUnsupported(t, err)
	require.NoError(t, err)
	t.Cleanup(func() { a.Close(); b.Close() })
	return a, b
}

// newPipe returns both ends of a fresh pipe, descriptors for frames to
// carry; both close when t ends.
func newPipe(t testing.TB) (r, w *os.File) {
	t.Helper()
	r, w, err := os.Pipe()
	require.NoError(t, err)
	t.Cleanup(func() { r.Close(); w.Close() })
	return r, w
}

// logBuffer is a concurrency-safe buffer behind a JSON slog handler.
type logBuffer struct{ testkit.Buffer }

func (l *logBuffer) logger() *slog.Logger { return slog.New(slog.NewJSONHandler(l, nil)) }

// quietLogger keeps worker output out of the test log unless it fails.
func quietLogger(t testing.TB) *slog.Logger {
	var l logBuffer
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("worker log:\n%s", l.String())
		}
	})
	return l.logger()
}

// startWorker starts the test binary as a worker and closes it at cleanup.
func startWorker(t testing.TB, s Spec) *Process {
	t.Helper()
	if s.Logger == nil {
		s.Logger = quietLogger(t)
	}
	p, err := Start(testContext(), s)
	testkit.SkipUnsupported(t, err)
	require.NoError(t, err)
	t.Cleanup(func() { p.Close() })
	return p
}

// waitDone waits for the reap, failing the test after a generous timeout.
func waitDone(t testing.TB, p *Process) *cancel.Exit {
	t.Helper()
	select {
	case <-p.Done():
		return p.Exit()
	case <-time.After(20 * time.Second):
		t.Fatalf("worker %d (pid %d) not reaped in time", p.ID(), p.PID())
		return nil
	}
}

// roundTrip sends f and reads the reply.
func roundTrip(t testing.TB, c *Conn, f Frame) Frame {
	t.Helper()
	require.NoError(t, c.WriteFrame(f))
	got, err := c.ReadFrame()
	require.NoError(t, err)
	return got
}

// openFDs counts this process's open descriptors.
func openFDs(t testing.TB) int {
	t.Helper()
	all, _ := testkit.CountFDs(t, "")
	return all
}

// requirePair skips tb where NewPair (like Start) fails with
// ErrUnsupported, as it does where this package's worker processes do not
// run, and fails tb if NewPair fails otherwise. The platforms where they
// run are Linux, macOS and the BSDs, as internal/subproc's
// PlatformSupport also says.
func requirePair(tb testing.TB) {
	tb.Helper()
	a, b, err := NewPair(0)
	if errors.Is(err, ErrUnsupported) {
		tb.Skip(err.Error())
	}
	require.NoError(tb, err)
	require.NoError(tb, a.Close())
	require.NoError(tb, b.Close())
}
