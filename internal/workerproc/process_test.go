//go:build linux

package workerproc

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/offloadgo/offload/cancel"
	"github.com/offloadgo/offload/internal/testkit"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestStartHello(t *testing.T) {
	t.Parallel()
	p := startWorker(t, Spec{ID: 3})
	h := p.Hello()
	assert.Equal(t, ProtocolVersion, h.Version)
	assert.Equal(t, p.PID(), h.PID)
	assert.Equal(t, testTasks, h.Tasks)
	assert.Equal(t, 3, p.ID())
	assert.Nil(t, p.Exit(), "no account while running")
	assert.Equal(t, DefaultMaxFrame, p.Conn().MaxFrame())
}

func TestEcho(t *testing.T) {
	t.Parallel()
	p := startWorker(t, Spec{MaxFrame: 1 << 20})
	for i, body := range [][]byte{nil, []byte("sixteen bytes..."), bytes.Repeat([]byte("x"), 1<<20)} {
		got := roundTrip(t, p.Conn(), Frame{Kind: kindEcho, ID: uint64(i), Body: body})
		assert.Equal(t, kindEcho, got.Kind)
		assert.Equal(t, uint64(i), got.ID)
		assert.True(t, bytes.Equal(body, got.Body), "body of %d bytes", len(body))
	}
}

func TestFrameLimitsAcrossProcesses(t *testing.T) {
	t.Parallel()
	const max = 4096
	p := startWorker(t, Spec{MaxFrame: max})
	c := p.Conn()
	// Parent to child: refused before sending.
	require.ErrorIs(t, c.WriteFrame(Frame{Kind: kindEcho, Body: make([]byte, max+1)}), ErrFrameTooLarge)
	got := roundTrip(t, c, Frame{Kind: kindEcho, Body: make([]byte, max)})
	assert.Len(t, got.Body, max)
	// Child to parent: the child's own Conn refuses it too (it learnt the
	// max from the environment), and says so in its reply.
	got = roundTrip(t, c, Frame{Kind: kindSendN, Body: []byte(strconv.Itoa(max + 1))})
	assert.Contains(t, string(got.Body), ErrFrameTooLarge.Error())
	got = roundTrip(t, c, Frame{Kind: kindSendN, Body: []byte(strconv.Itoa(max))})
	assert.Len(t, got.Body, max)
	got, err := c.ReadFrame() // the reply to the frame it did send
	require.NoError(t, err)
	assert.Equal(t, "<nil>", string(got.Body))
}

func TestPassFDsToWorker(t *testing.T) {
	t.Parallel()
	p := startWorker(t, Spec{})
	f, err := os.CreateTemp(t.TempDir(), "segment")
	require.NoError(t, err)
	defer f.Close()
	_, err = f.WriteString("shared segment contents")
	require.NoError(t, err)
	r, err := os.Open(f.Name())
	require.NoError(t, err)
	defer r.Close()
	got := roundTrip(t, p.Conn(), Frame{Kind: kindFDs, FDs: []int{int(r.Fd())}})
	assert.Equal(t, "shared segment contents", string(got.Body))
}

func TestWorkerOutputGoesToLogger(t *testing.T) {
	t.Parallel()
	var logs logBuffer
	p := startWorker(t, Spec{ID: 42, Logger: logs.logger()})
	// Garbage that looks like a frame header, and a line longer than maxLine.
	garbage := append([]byte{0, 0, 0, 5, kindEcho, 0, 0, 0}, "not a frame\n"...)
	long := strings.Repeat("L", maxLine+100) + "\n"
	got := roundTrip(t, p.Conn(), Frame{Kind: kindPrint, ID: 1, Body: append(garbage, long...)})
	assert.Equal(t, uint64(1), got.ID, "printed output never reaches the channel")
	got = roundTrip(t, p.Conn(), Frame{Kind: kindEcho, ID: 2, Body: []byte("clean")})
	assert.Equal(t, "clean", string(got.Body))

	require.NoError(t, p.Close())
	out := logs.String()
	for _, stream := range []string{"stdout", "stderr"} {
		assert.Contains(t, out, `"stream":"`+stream+`"`)
	}
	assert.Contains(t, out, `"worker":42`)
	assert.Contains(t, out, `"pid":`+strconv.Itoa(p.PID()))
	assert.Contains(t, out, "not a frame")
	assert.Contains(t, out, `"msg":"`+strings.Repeat("L", maxLine)+`"`, "a long line is split at maxLine")
	assert.Contains(t, out, `"msg":"LLLL`+strings.Repeat("L", 96)+`"`)
	assert.LessOrEqual(t, len(p.Exit().Stderr), tailBytes)
}

func TestWorkerExitsOnEOF(t *testing.T) {
	t.Parallel()
	p := startWorker(t, Spec{})
	require.NoError(t, p.Conn().Close())
	e := waitDone(t, p)
	assert.True(t, e.Success(), "%v", e)
	assert.Equal(t, cancel.NotKilled, e.Killed)
	_, err := p.Conn().ReadFrame()
	assert.ErrorIs(t, err, ErrClosed)
}

func TestEOFWhenWorkerDies(t *testing.T) {
	t.Parallel()
	p := startWorker(t, Spec{})
	p.Kill()
	_, err := p.Conn().ReadFrame()
	require.ErrorIs(t, err, io.EOF, "the supervisor reads EOF from a dead worker")
	e := waitDone(t, p)
	assert.Equal(t, cancel.KilledByKill, e.Killed)
}

func TestCloseKillsAWorkerThatIgnoresEOF(t *testing.T) {
	t.Parallel()
	p := startWorker(t, Spec{CloseGrace: 50 * time.Millisecond})
	require.NoError(t, p.Conn().WriteFrame(Frame{Kind: kindHang}))
	require.NoError(t, p.Close())
	e := p.Exit()
	require.NotNil(t, e, "Close returns after the reap")
	assert.Equal(t, cancel.KilledByClose, e.Killed)
	assert.Equal(t, syscall.SIGKILL, e.Signal)
	assert.Contains(t, e.Error(), "was killed by its supervisor (close)")
	require.NoError(t, p.Close(), "Close is idempotent")
	assert.True(t, testkit.ProcessExited(p.PID()))
}

func TestTerminate(t *testing.T) {
	t.Parallel()
	t.Run("kills after grace", func(t *testing.T) {
		t.Parallel()
		p := startWorker(t, Spec{})
		require.NoError(t, p.Conn().WriteFrame(Frame{Kind: kindHang}))
		asked := false
		p.Terminate(20*time.Millisecond, func() { asked = true })
		assert.True(t, asked)
		e := waitDone(t, p)
		assert.Equal(t, cancel.KilledByTerminate, e.Killed)
		assert.Contains(t, e.Error(), "(terminate)")
	})
	t.Run("stopped in time", func(t *testing.T) {
		t.Parallel()
		p := startWorker(t, Spec{})
		stop := p.Terminate(time.Hour, nil)
		assert.True(t, stop())
		got := roundTrip(t, p.Conn(), Frame{Kind: kindEcho, Body: []byte("alive")})
		assert.Equal(t, "alive", string(got.Body))
	})
	t.Run("no grace", func(t *testing.T) {
		t.Parallel()
		p := startWorker(t, Spec{})
		p.Terminate(0, nil)
		assert.Equal(t, cancel.KilledByTerminate, waitDone(t, p).Killed)
	})
}

func TestKillReturnsAtOnce(t *testing.T) {
	t.Parallel()
	p := startWorker(t, Spec{})
	require.NoError(t, p.Conn().WriteFrame(Frame{Kind: kindHang}))
	start := time.Now()
	p.Kill()
	p.Kill() // idempotent
	assert.Less(t, time.Since(start), time.Second)
	e := waitDone(t, p)
	assert.Equal(t, cancel.KilledByKill, e.Killed)
	p.Kill() // a no-op after the reap
}

func TestStartFailures(t *testing.T) {
	t.Parallel()
	requirePair(t)
	sleep, err := exec.LookPath("sleep")
	require.NoError(t, err)
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name string
		ctx  context.Context
		spec Spec
		want []error
		msg  string
	}{
		{"no such binary", nil, Spec{Path: "/nonexistent/worker"}, []error{os.ErrNotExist}, "start worker"},
		{"exits before hello", nil, Spec{Path: "/bin/sh", Args: []string{"-c", "echo bad flag >&2; exit 7"}},
			nil, "exited with status 7; stderr: bad flag"},
		{"never says hello", nil, Spec{Path: sleep, Args: []string{"60"}, StartTimeout: 100 * time.Millisecond},
			[]error{ErrStartTimeout}, "no hello"},
		{"worker stalls before hello", nil, Spec{Env: []string{envNoHello + "=1"}, StartTimeout: 100 * time.Millisecond},
			[]error{ErrStartTimeout}, "no hello"},
		{"ctx cancelled", cancelled, Spec{Path: sleep, Args: []string{"60"}}, []error{context.Canceled}, "canceled"},
		{"version mismatch", nil, Spec{Env: []string{envHelloVersion + "=99"}}, []error{ErrProtocol}, "protocol version 99"},
		// A build from before call headers carried a trace context.
		{"version 2 worker", nil, Spec{Env: []string{envHelloVersion + "=2"}}, []error{ErrProtocol}, "worker speaks protocol version 2, supervisor 4 (is the worker the same build?)"},
		{"bad max frame", nil, Spec{MaxFrame: -1}, nil, "MaxFrame"},
		{"bad memory limit", nil, Spec{MemoryLimit: -1}, nil, "MemoryLimit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx := tt.ctx
			if ctx == nil {
				ctx = context.Background()
			}
			tt.spec.Logger = quietLogger(t)
			p, err := Start(ctx, tt.spec)
			require.Error(t, err)
			assert.Nil(t, p)
			for _, want := range tt.want {
				assert.ErrorIs(t, err, want)
			}
			assert.Contains(t, err.Error(), tt.msg)
			assert.True(t, strings.HasPrefix(err.Error(), "workerproc: "), err.Error())
		})
	}
}

func TestExitOfFailedStartIsAnExit(t *testing.T) {
	t.Parallel()
	requirePair(t)
	_, err := Start(context.Background(), Spec{Path: "/bin/sh", Args: []string{"-c", "exit 4"}, Logger: quietLogger(t)})
	var e *cancel.Exit
	require.True(t, errors.As(err, &e), "%v", err)
	assert.Equal(t, 4, e.Code)
}

func TestKillUnblocksAWriter(t *testing.T) {
	t.Parallel()
	p := startWorker(t, Spec{})
	require.NoError(t, p.Conn().WriteFrame(Frame{Kind: kindHang}))
	errc := make(chan error, 1)
	go func() {
		big := Frame{Kind: kindEcho, Body: make([]byte, 1<<20)}
		for {
			// The worker reads nothing: the socket fills and a write blocks.
			if err := p.Conn().WriteFrame(big); err != nil {
				errc <- err
				return
			}
		}
	}()
	// The worker reads nothing: the writer waits in poll for room.
	testkit.WaitBlocked(t, "syscall", 20*time.Second, "TestKillUnblocksAWriter.func1", "unix.Ppoll")
	p.Kill()
	select {
	case err := <-errc:
		assert.True(t, errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNRESET), "%v", err)
	case <-time.After(20 * time.Second):
		t.Fatal("writer still blocked after the worker died")
	}
}

func TestNewPairBadMax(t *testing.T) {
	t.Parallel()
	requirePair(t)
	_, _, err := NewPair(-1)
	require.Error(t, err)
	a, b, err := NewPair(0)
	require.NoError(t, err)
	assert.Equal(t, DefaultMaxFrame, a.MaxFrame())
	a.Close()
	b.Close()
}

// TestAttachRefusesAStrayWorker: a process that has the worker variables
// but was not started by its parent's Start gets a clear error from Attach.
func TestAttachRefusesAStrayWorker(t *testing.T) {
	t.Parallel()
	requirePair(t)
	exe, err := os.Executable()
	require.NoError(t, err)
	tests := []struct {
		name, parent, want string
	}{
		{"parent gone", "1", "worker's supervisor (pid \"1\") is gone"},
		{"no channel", strconv.Itoa(os.Getpid()), "worker channel (fd 3)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cmd := exec.Command(exe)
			cmd.Env = append(os.Environ(), EnvWorker+"=1", EnvParent+"="+tt.parent, EnvMaxFrame+"=100", "GORACE=atexit_sleep_ms=0")
			out, err := cmd.CombinedOutput()
			var exitErr *exec.ExitError
			require.ErrorAs(t, err, &exitErr)
			assert.Equal(t, 1, exitErr.ExitCode())
			assert.Contains(t, string(out), tt.want)
		})
	}
}
