package main

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/offloadgo/offload/examples/internal/cmdtest"
	"github.com/offloadgo/offload/natsremote"
)

// runMainEnv makes this test binary run the service's main (see
// TestMainServes).
const runMainEnv = "OFFLOAD_EXAMPLE_SERVICE_MAIN"

func TestMain(m *testing.M) {
	// As in the service's main: this test binary is also the service's
	// worker processes and its worker node.
	natsremote.Main()
	cmdtest.RunMain(runMainEnv, main)
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
	service := cmdtest.Start(t, cmdtest.Command(runMainEnv, "-addr", "127.0.0.1:0", "-workers", "1", "-nats-port", "0", "-store", t.TempDir()))
	url := service.URL

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

	service.Stop(t)
}

// readBody reads and closes resp's body.
func readBody(t *testing.T, resp *http.Response) string {
	t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return string(b)
}
