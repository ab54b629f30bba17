package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/offloadgo/offload/natsremote"
)

// runMainEnv makes this test binary run the service's main (see
// TestMainServes).
const runMainEnv = "OFFLOAD_EXAMPLE_SERVICE_MAIN"

func TestMain(m *testing.M) {
	// As in the service's main: this test binary is also the service's
	// worker processes and its worker node.
	natsremote.Main()
	if os.Getenv(runMainEnv) == "1" {
		main()
		os.Exit(0)
	}
	goleak.VerifyTestMain(m,
		// The reports queue's work stream sources its delayed jobs: a
		// server shut down while it sets that up leaves nats-server's
		// wait for an answer behind, for up to 30 s.
		goleak.IgnoreTopFunction("github.com/nats-io/nats-server/v2/server.(*stream).trySetupSourceConsumer.func3"))
}

// The command as a user runs it: it says where it listens, answers
// /hash and /metrics there with worker processes of its own, /reports and
// /jobs/{id} with a NATS server of its own, and on SIGTERM shuts down and
// exits with status 0.
func TestMainServes(t *testing.T) {
	t.Parallel()
	cmd := exec.Command(os.Args[0], "-addr", "127.0.0.1:0", "-workers", "1", "-nats-port", "0", "-store", t.TempDir())
	cmd.Env = append(os.Environ(), runMainEnv+"=1")
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

	client := &http.Client{Timeout: time.Minute}
	resp, err := client.Post(url+"/hash?rounds=1000", "application/octet-stream", strings.NewReader("hello"))
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, hashOf("hello", 1000)+"\n", readBody(t, resp))

	resp, err = client.Get(url + "/metrics")
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, readBody(t, resp), `offload_task_runs_total{outcome="completed",pool="hash",task="hash"} 1`+"\n")

	// The reports' routes are there (TestReports runs a report through
	// them, with a worker service): a bad report and an unknown job.
	resp, err = client.Post(url+"/reports", "application/json", strings.NewReader(`{"rows": 0}`))
	require.NoError(t, err)
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode, readBody(t, resp))
	resp, err = client.Get(url + "/jobs/nosuchjob")
	require.NoError(t, err)
	assert.Equal(t, http.StatusNotFound, resp.StatusCode, readBody(t, resp))

	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	select {
	case err := <-exited:
		require.NoError(t, err, "the service's exit after SIGTERM; it logged:\n%s", logged)
	case <-time.After(time.Minute):
		t.Fatal("the service did not exit within a minute of SIGTERM")
	}
}

// readBody reads and closes resp's body.
func readBody(t *testing.T, resp *http.Response) string {
	t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return string(b)
}

// testCtx is a ctx that ends with the test, or after two minutes.
func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}
