package pool_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/internal/testkit"
	"github.com/offloadgo/offload/pool"
)

// Tasks for the Subprocess tests: registered at package level, so the test
// binary re-executed as a worker has them too.
var (
	procPID = pool.Register("proc.pid", func(context.Context, struct{}) (int, error) {
		return os.Getpid(), nil
	})
	procEcho = pool.Register("proc.echo", func(_ context.Context, in echoIn) (echoIn, error) {
		in.Count++
		return in, nil
	})
	procFail = pool.Register("proc.fail", func(_ context.Context, msg string) (int, error) {
		return 0, fmt.Errorf("task says: %s", msg)
	})
	procPanic = pool.Register("proc.panic", func(_ context.Context, v string) (int, error) {
		panic(v)
	})
	// procSpin ignores its ctx: only a kill stops it.
	procSpin = pool.Register("proc.spin", func(context.Context, struct{}) (int, error) {
		for {
			runtime.Gosched()
		}
	})
	// procMatch runs an exponential backtracking match, ctx unseen.
	procMatch = pool.Register("proc.match", func(_ context.Context, in matchIn) (bool, error) {
		return backtrack(in.Pattern, in.Text), nil
	})
	// procBlock announces itself on stdout, then waits for its ctx,
	// announcing that too (the worker got the cancel frame).
	procBlock = pool.Register("proc.block", func(ctx context.Context, tag string) (int, error) {
		fmt.Printf("proc.block %s started pid=%d\n", tag, os.Getpid())
		<-ctx.Done()
		fmt.Printf("proc.block %s cancelled\n", tag)
		return 0, ctx.Err()
	})
	procSleep = pool.Register("proc.sleep", func(_ context.Context, d time.Duration) (int, error) {
		time.Sleep(d)
		return 1, nil
	})
	procCrash = pool.Register("proc.crash", func(_ context.Context, how string) (int, error) {
		crash(how)
		return 0, nil
	})
	procGarbage = pool.Register("proc.garbage", func(_ context.Context, n int) (int, error) {
		junk := "\x00\x00\x00\x08\x03\x00\x00\x00garbage \xff\xfe frame-looking bytes"
		for i := range n {
			fmt.Fprintf(os.Stdout, "%s %d\n", junk, i)
			fmt.Fprintf(os.Stderr, "stderr %s %d\n", junk, i)
		}
		os.Stdout.WriteString("no newline at the end")
		return n * 2, nil
	})
	procBig = pool.Register("proc.big", func(_ context.Context, n int) (string, error) {
		return strings.Repeat("x", n), nil
	})
	procChan = pool.Register("proc.chan", func(_ context.Context, in chanIn) (int, error) {
		return 0, nil
	})
)

type echoIn struct {
	Name  string
	Count int
	Tags  map[string][]byte
}

type matchIn struct{ Pattern, Text string }

type chanIn struct{ C chan int }

// backtrack matches text against pattern, where 'a' matches itself and
// '*' after a letter means any number of it, by naive backtracking: "a*"
// repeated against "aaa…b" takes exponential time.
func backtrack(pattern, text string) bool {
	if pattern == "" {
		return text == ""
	}
	if len(pattern) >= 2 && pattern[1] == '*' {
		for i := 0; ; i++ {
			if backtrack(pattern[2:], text[i:]) {
				return true
			}
			if i >= len(text) || text[i] != pattern[0] {
				return false
			}
		}
	}
	return text != "" && text[0] == pattern[0] && backtrack(pattern[1:], text[1:])
}

// overflow recurses until the stack limit ends the process. The depth
// check never holds (depth only grows, and the stack runs out long before
// it could wrap); it is there so the recursion is not unconditional.
func overflow(depth int) int {
	if depth < 0 {
		return 0
	}
	var frame [64]byte
	frame[depth%64] = byte(depth)
	return overflow(depth+1) + int(frame[0])
}

// crash ends the worker process the way how says.
func crash(how string) {
	switch how {
	case "exit3":
		fmt.Fprintln(os.Stderr, "exiting with status 3")
		os.Exit(3)
	case "goroutine-panic":
		done := make(chan struct{})
		go func() { panic("boom on a task's own goroutine") }()
		<-done
	case "fatal":
		// A Go runtime fatal error, which no recover catches. Not
		// concurrent map writes: under -race the detector's report of the
		// same writes interleaves with the runtime's on stderr, and which
		// comes first is a race; and with one P the writes may never
		// overlap. A stack overflow is deterministic: a small limit makes
		// it come at once.
		debug.SetMaxStack(1 << 20)
		overflow(0)
	case "nil":
		// Go turns the SIGSEGV into a panic, which on the task's own
		// goroutine the worker recovers; on another one it ends the process.
		done := make(chan struct{})
		go func() {
			var p *echoIn
			fmt.Println(p.Name)
		}()
		<-done
	case "nil-here":
		var p *echoIn
		fmt.Println(p.Name)
	case "alloc":
		var keep [][]byte
		for range 512 {
			b := make([]byte, 1<<20)
			for i := 0; i < len(b); i += 4096 {
				b[i] = 1
			}
			keep = append(keep, b)
		}
		fmt.Println(len(keep))
	}
}

// logCapture collects what worker processes print, through a slog handler.
type logCapture struct{ testkit.Buffer }

func (l *logCapture) logger() *slog.Logger { return slog.New(slog.NewTextHandler(l, nil)) }

// waitLog waits until the workers' log holds s.
func (l *logCapture) waitLog(t *testing.T, s string) {
	t.Helper()
	require.Eventually(t, func() bool { return strings.Contains(l.String(), s) },
		20*time.Second, time.Millisecond, "worker log never got %q:\n%s", s, l.String())
}

// waitPID waits until the workers' log has prefix, and returns the pid
// that follows it.
func (l *logCapture) waitPID(t *testing.T, prefix string) int {
	t.Helper()
	l.waitLog(t, prefix)
	return pidFromLog(t, l.String(), prefix)
}

// newProcPool returns a Subprocess pool whose workers' output is captured
// (and shown if the test fails).
func newProcPool(t *testing.T, o pool.Options) (*pool.Pool, *logCapture) {
	t.Helper()
	o.Isolation = pool.Subprocess
	var log logCapture
	if o.Logger == nil {
		o.Logger = log.logger()
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("worker log:\n%s", log.String())
		}
	})
	return newPool(t, o), &log
}

// testCtx is the test's ctx, bounded against a hang (testkit.Ctx).
var testCtx = testkit.Ctx
