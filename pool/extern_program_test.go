package pool_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/internal/programtest"
	"github.com/offloadgo/offload/internal/testkit"
	"github.com/offloadgo/offload/pool"
)

// xMissing is a task the test workers do not serve.
var xMissing = pool.Extern[programtest.None, programtest.None]("not served by the program")

// eachLanguage runs test once per language, in parallel.
func eachLanguage(t *testing.T, test func(t *testing.T, l testkit.Program)) {
	for _, l := range testkit.Programs {
		t.Run(l.Name, func(t *testing.T) {
			t.Parallel()
			test(t, l)
		})
	}
}

// newProgramPool returns a pool of l's test worker, closed with the test.
func newProgramPool(t *testing.T, l testkit.Program, o pool.Options) *pool.Pool {
	t.Helper()
	o.Isolation = pool.Subprocess
	o.Subprocess.Command = l.Command(t, l.Worker)
	if o.Workers == 0 {
		o.Workers = 1
	}
	return newPool(t, o)
}

func TestProgramRunsTasks(t *testing.T) {
	eachLanguage(t, func(t *testing.T, l testkit.Program) {
		p := newProgramPool(t, l, pool.Options{})
		ctx := testkit.Ctx(t)

		programtest.CheckRoundTrips(t, ctx, p)

		_, err := pool.Run(ctx, p, xMissing, programtest.None{})
		require.ErrorIs(t, err, pool.ErrUnknownTask)
		assert.Contains(t, err.Error(), l.Worker)

		_, err = pool.Run(ctx, p, Sum, SumIn{A: 1})
		require.ErrorIs(t, err, pool.ErrUnknownTask, "a Go task in a program")

		s := p.Stats()
		assert.Zero(t, s.Crashed+s.Terminated, "no worker was lost: %+v", s)
	})
}

func TestExternOnlyInItsProgram(t *testing.T) {
	in := newPool(t, pool.Options{Workers: 1})
	sub := newPool(t, pool.Options{Workers: 1, Isolation: pool.Subprocess})
	for _, p := range []*pool.Pool{in, sub} {
		_, err := pool.Run(testkit.Ctx(t), p, programtest.Echo, programtest.EchoIO{})
		require.ErrorIs(t, err, pool.ErrUnknownTask)
		assert.Contains(t, err.Error(), "Extern")
		_, err = pool.Submit(testkit.Ctx(t), p, programtest.Echo, programtest.EchoIO{})
		require.ErrorIs(t, err, pool.ErrUnknownTask)
	}
	assert.Zero(t, sub.Stats().Completed)
}

// TestProgramCancel: a task that honours the cancel keeps its process; one
// that ignores it is killed with its group after TerminateGrace.
func TestProgramCancel(t *testing.T) {
	eachLanguage(t, func(t *testing.T, l testkit.Program) {
		p := newProgramPool(t, l, pool.Options{Subprocess: pool.SubprocessOptions{TerminateGrace: 5 * time.Second}})
		before, err := pool.Run(testkit.Ctx(t), p, programtest.PID, programtest.None{})
		require.NoError(t, err)

		ctx, cancel := context.WithTimeout(testkit.Ctx(t), 300*time.Millisecond)
		defer cancel()
		_, err = pool.Run(ctx, p, programtest.Sleep, programtest.SecondsIn{Seconds: 60})
		require.ErrorIs(t, err, pool.ErrTerminated)
		require.ErrorIs(t, err, context.DeadlineExceeded)

		after, err := pool.Run(testkit.Ctx(t), p, programtest.PID, programtest.None{})
		require.NoError(t, err)
		assert.Equal(t, before.PID, after.PID, "a task that stopped within its grace keeps its process")
		assert.Zero(t, p.Stats().Terminated)
	})
}

func TestProgramIgnoringCancelIsKilled(t *testing.T) {
	eachLanguage(t, func(t *testing.T, l testkit.Program) {
		log := newLogSink()
		p := newProgramPool(t, l, pool.Options{Logger: log.logger(), Subprocess: pool.SubprocessOptions{TerminateGrace: 200 * time.Millisecond}})
		before, err := pool.Run(testkit.Ctx(t), p, programtest.PID, programtest.None{})
		require.NoError(t, err)

		ctx, cancel := context.WithCancel(testkit.Ctx(t))
		f, err := pool.Submit(ctx, p, programtest.Stubborn, programtest.SecondsIn{Seconds: 60})
		require.NoError(t, err)
		log.waitFor(t, "stubborn: deaf to the cancel")
		cancel()
		_, err = f.Wait()
		require.ErrorIs(t, err, pool.ErrTerminated)

		after, err := pool.Run(testkit.Ctx(t), p, programtest.PID, programtest.None{})
		require.NoError(t, err)
		assert.NotEqual(t, before.PID, after.PID, "the stubborn task's process was killed")
		assert.True(t, testkit.ProcessExited(before.PID))
		assert.Equal(t, uint64(1), p.Stats().Terminated)
	})
}

// TestProgramGrandchildDiesWithWorker: what a task starts goes with its
// worker's process group.
func TestProgramGrandchildDiesWithWorker(t *testing.T) {
	eachLanguage(t, func(t *testing.T, l testkit.Program) {
		p := newProgramPool(t, l, pool.Options{})
		out, err := pool.Run(testkit.Ctx(t), p, programtest.Grandchild, programtest.None{})
		require.NoError(t, err)
		require.False(t, testkit.ProcessExited(out.PID), "the grandchild runs")
		require.NoError(t, p.RecycleWorkers(testkit.Ctx(t)))
		require.Eventually(t, func() bool { return testkit.ProcessExited(out.PID) }, time.Minute, 5*time.Millisecond)
	})
}

// TestProgramOutputIsLogged: what a program prints reaches the pool's
// logger line by line, and no print corrupts the protocol.
func TestProgramOutputIsLogged(t *testing.T) {
	eachLanguage(t, func(t *testing.T, l testkit.Program) {
		log := newLogSink()
		p := newProgramPool(t, l, pool.Options{Logger: log.logger()})
		out, err := pool.Run(testkit.Ctx(t), p, programtest.Print, programtest.None{})
		require.NoError(t, err)
		assert.True(t, out.OK)
		echo, err := pool.Run(testkit.Ctx(t), p, programtest.Echo, programtest.EchoIO{Text: "after", N: 1})
		require.NoError(t, err)
		assert.Equal(t, "after", echo.Text)
		line := log.waitFor(t, "one line on stderr")
		assert.Contains(t, line, "stream=stderr")
		assert.Contains(t, line, "worker=1")
		assert.Contains(t, log.waitFor(t, "third line on stdout"), "stream=stdout")
		assert.Zero(t, p.Stats().Crashed)
	})
}

// logSink is a pool's logger that a test can wait on.
type logSink struct {
	mu    sync.Mutex
	text  bytes.Buffer
	wrote chan struct{} // closed and replaced at each write
}

func newLogSink() *logSink { return &logSink{wrote: make(chan struct{})} }

func (s *logSink) logger() *slog.Logger { return slog.New(slog.NewTextHandler(s, nil)) }

func (s *logSink) Write(b []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	close(s.wrote)
	s.wrote = make(chan struct{})
	return s.text.Write(b)
}

// waitFor waits until a logged line contains sub, and returns that line.
func (s *logSink) waitFor(t testing.TB, sub string) string {
	t.Helper()
	ctx := testkit.Ctx(t)
	for {
		s.mu.Lock()
		for line := range strings.Lines(s.text.String()) {
			if strings.Contains(line, sub) {
				s.mu.Unlock()
				return line
			}
		}
		wrote := s.wrote
		s.mu.Unlock()
		select {
		case <-wrote:
		case <-ctx.Done():
			require.Failf(t, "not logged", "no line with %q in:\n%s", sub, s.String())
		}
	}
}

func (s *logSink) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.text.String()
}
