package main

import (
	"bufio"
	"bytes"
	"context"
	"image"
	"image/png"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// runMainEnv makes this test binary run the service's main (see
// TestMainServes).
const runMainEnv = "OFFLOAD_EXAMPLE_PYWORKER_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runMainEnv) == "1" {
		main()
		os.Exit(0)
	}
	goleak.VerifyTestMain(m)
}

// The command as a user runs it, from a directory with nothing of the
// example in it: it says where it listens, makes thumbnails there with
// the Python worker it carries, and on SIGTERM shuts down, exits with
// status 0, and leaves no file behind.
func TestMainServes(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("pool.New refuses Subprocess workers on Windows")
	}
	t.Parallel()
	tmp := t.TempDir()
	cmd := exec.Command(os.Args[0], "-addr", "127.0.0.1:0", "-workers", "1")
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), runMainEnv+"=1", "TMPDIR="+tmp)
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	exited := make(chan error, 1)
	t.Cleanup(func() {
		_ = cmd.Process.Kill() // if it is still running: the test failed
		<-exited
	})

	// Read what it logs (until it exits, so that it never blocks on a
	// full pipe), and find the address in its first line.
	addr := make(chan string, 1)
	logged := &strings.Builder{} // written only by the goroutine below until exited is closed
	go func() {
		listening := regexp.MustCompile(`listening on (http://\S+)`)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			logged.WriteString(sc.Text() + "\n")
			if m := listening.FindStringSubmatch(sc.Text()); m != nil {
				addr <- m[1]
			}
		}
		exited <- cmd.Wait()
		close(exited)
	}()
	var url string
	select {
	case url = <-addr:
	case err := <-exited:
		t.Fatalf("the service exited before listening: %v\n%s", err, logged)
	case <-time.After(time.Minute):
		t.Fatal("the service did not say where it listens within a minute")
	}

	resp, body := post(t, context.Background(), url+"/thumb?width=8", encode(t, image.NewGray(image.Rect(0, 0, 32, 16))))
	require.Equal(t, 200, resp.StatusCode, "%s", body)
	thumb, err := png.Decode(bytes.NewReader(body))
	require.NoError(t, err)
	assert.Equal(t, image.Rect(0, 0, 8, 4), thumb.Bounds())

	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	select {
	case err := <-exited:
		require.NoError(t, err, "the service's exit after SIGTERM; it logged:\n%s", logged)
	case <-time.After(time.Minute):
		t.Fatal("the service did not exit within a minute of SIGTERM")
	}
	left, err := os.ReadDir(tmp)
	require.NoError(t, err)
	assert.Empty(t, left, "the worker's files should be removed")
}
