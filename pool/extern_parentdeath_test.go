package pool_test

import (
	"bufio"
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/internal/programtest"
	"github.com/offloadgo/offload/internal/testkit"
	"github.com/offloadgo/offload/pool"
)

// envProgramHost makes the test binary a service that keeps a program
// pool and dies under it (see runProgramHost): its value is the language.
const envProgramHost = "OFFLOAD_TEST_PROGRAM_HOST"

// runProgramHost, in a process started by TestProgramDiesWithItsPool,
// runs the grandchild task in a program pool, then starts a long call,
// prints the worker's and the grandchild's pids once the call runs, and
// waits to be killed, the pool and the call still open.
func runProgramHost() {
	name := os.Getenv(envProgramHost)
	if name == "" {
		return
	}
	fail := func(err error) {
		fmt.Fprintln(os.Stderr, "program host:", err)
		os.Exit(2)
	}
	for _, l := range testkit.Programs {
		if l.Name != name {
			continue
		}
		worker, err := testkit.SDKTestdata(l.Worker)
		if err != nil {
			fail(err)
		}
		started := &lineWatch{want: "sleep: started", seen: make(chan struct{})}
		p, err := pool.New(pool.Options{Workers: 1, Isolation: pool.Subprocess, Logger: slog.New(slog.NewTextHandler(started, nil)),
			Subprocess: pool.SubprocessOptions{Command: []string{l.Binary, worker}}})
		if err != nil {
			fail(err)
		}
		pid, err := pool.Run(context.Background(), p, programtest.PID, programtest.None{})
		if err != nil {
			fail(err)
		}
		child, err := pool.Run(context.Background(), p, programtest.Grandchild, programtest.None{})
		if err != nil {
			fail(err)
		}
		if _, err := pool.Submit(context.Background(), p, programtest.Sleep, programtest.SecondsIn{Seconds: 300}); err != nil {
			fail(err)
		}
		<-started.seen // the call runs: the program hears of the death while busy
		fmt.Println(pid.PID, child.PID)
		select {} // killed here, the pool open
	}
	fail(fmt.Errorf("no language %q", name))
}

// TestProgramDiesWithItsPool: when the pool's process dies without
// closing its pool, the program's processes and what they started go
// too, also while a call runs: Linux's parent-death signal, elsewhere the
// lifeline's EOF, which the SDKs turn into a kill of their group.
func TestProgramDiesWithItsPool(t *testing.T) {
	testkit.SkipOffLinux(t, "the parent-death signal")
	eachLanguage(t, func(t *testing.T, l testkit.Program) {
		l.Command(t, l.Worker) // the program is installed
		exe, err := os.Executable()
		require.NoError(t, err)
		cmd := exec.CommandContext(testkit.Ctx(t), exe, "-test.run=^$")
		cmd.Env = append(os.Environ(), envProgramHost+"="+l.Name)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		stdout, err := cmd.StdoutPipe()
		require.NoError(t, err)
		require.NoError(t, cmd.Start())
		line, err := bufio.NewReader(stdout).ReadString('\n')
		if err != nil {
			_ = cmd.Process.Kill()
			t.Fatalf("the host failed: %v: %v: %s", err, cmd.Wait(), stderr.String())
		}
		var pids []int
		for _, f := range strings.Fields(line) {
			pid, err := strconv.Atoi(f)
			require.NoError(t, err)
			require.False(t, testkit.ProcessExited(pid))
			pids = append(pids, pid)
		}
		require.Len(t, pids, 2, "the host printed %q", line)
		require.NoError(t, cmd.Process.Kill())
		_ = cmd.Wait()
		for i, what := range []string{"worker", "grandchild"} {
			require.Eventually(t, func() bool { return testkit.ProcessExited(pids[i]) }, time.Minute, 5*time.Millisecond,
				"the %s (pid %d) outlived the pool's process", what, pids[i])
		}
	})
}

// lineWatch is a log's writer that closes seen once a record holds want.
type lineWatch struct {
	want string
	once sync.Once
	seen chan struct{}
}

func (w *lineWatch) Write(b []byte) (int, error) {
	if strings.Contains(string(b), w.want) {
		w.once.Do(func() { close(w.seen) })
	}
	return len(b), nil
}
