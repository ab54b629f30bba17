// Package cmdtest runs an example's command as a user runs it, from the
// example's own test binary: TestMain calls RunMain first, and a test
// starts the command with Start, reaches it at Running.URL, and stops it
// with Running.Stop.
package cmdtest

import (
	"bufio"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// RunMain runs main, then exits with status 0, if the environment
// variable env is "1" (as Command sets it): the test binary is then the
// example's command. Otherwise it returns at once.
func RunMain(env string, main func()) {
	if os.Getenv(env) == "1" {
		main()
		os.Exit(0)
	}
}

// Command returns a command that runs this test binary as the example's
// command, with args: env is set to "1" in its environment, which RunMain,
// first in the binary's TestMain, reads. The caller may add to its Env
// and set its Dir before Start.
func Command(env string, args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), env+"=1")
	return cmd
}

// Running is a command Start started.
type Running struct {
	URL string // where it said it listens: http://host:port

	cmd    *exec.Cmd
	exited chan error       // its Wait's error, then closed
	logged *strings.Builder // what it logged: written only by Start's reader until exited has a value
}

// listening is the line a command logs once it serves.
var listening = regexp.MustCompile(`listening on (http://\S+)`)

// Start starts cmd and returns once it logs where it listens
// ("listening on http://…", on stderr). It fails t if cmd exits first or
// has not said so within a minute, with what cmd logged. A cmd still
// running at the end of the test is killed.
func Start(t *testing.T, cmd *exec.Cmd) *Running {
	t.Helper()
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	r := &Running{cmd: cmd, exited: make(chan error, 1), logged: &strings.Builder{}}
	t.Cleanup(func() {
		_ = cmd.Process.Kill() // if it is still running: the test failed
		<-r.exited
	})

	// Read what it logs until it exits, so that it never blocks on a
	// full pipe, and pass on the first address it says it listens on.
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			r.logged.WriteString(sc.Text() + "\n")
			if m := listening.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case addr <- m[1]:
				default: // a later one: the reader must go on to Wait
				}
			}
		}
		r.exited <- cmd.Wait()
		close(r.exited)
	}()
	select {
	case r.URL = <-addr:
	case err := <-r.exited:
		t.Fatalf("the service exited before listening: %v\n%s", err, r.logged)
	case <-time.After(time.Minute):
		t.Fatal("the service did not say where it listens within a minute")
	}
	return r
}

// Stop sends the command SIGTERM, and fails t unless it exits with
// status 0 within a minute.
func (r *Running) Stop(t *testing.T) {
	t.Helper()
	require.NoError(t, r.cmd.Process.Signal(syscall.SIGTERM))
	select {
	case err := <-r.exited:
		require.NoError(t, err, "the service's exit after SIGTERM; it logged:\n%s", r.logged)
	case <-time.After(time.Minute):
		t.Fatal("the service did not exit within a minute of SIGTERM")
	}
}
