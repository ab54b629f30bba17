package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/internal/testkit"
	"github.com/offloadgo/offload/natsjobs"
	"github.com/offloadgo/offload/natsremote/embedded"
)

// The reports' HTTP flow, with the API in this process and a worker
// service in a process of its own (this test binary, started as
// -role worker): a report not ready within WaitFor is 202 with a Location
// that serves its status, succeeded with the report once the worker ran
// it; a report ready within WaitFor is 200 with the report; a bad body is
// 400, an unknown job 404. The worker service exits 0 on SIGTERM.
func TestReports(t *testing.T) {
	t.Parallel()
	ctx := testkit.Ctx(t)
	s, err := embedded.Start(embedded.Options{Listen: true, StoreDir: t.TempDir()})
	require.NoError(t, err)
	t.Cleanup(s.Shutdown)
	nc, err := s.Connect()
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	q, err := natsjobs.Open(ctx, nc, natsjobs.Options{Name: reportsQueue})
	require.NoError(t, err)
	t.Cleanup(func() { _ = q.Close() })
	startWorker(t, s.ClientURL())

	mux := http.NewServeMux()
	// WaitFor 0 answers 202 whatever the job does; a minute is time
	// enough for any report of a thousand rows to end, on a busy machine.
	mux.Handle("POST /later", reportsHandler(q, 0))
	mux.Handle("POST /reports", reportsHandler(q, time.Minute))
	mux.Handle("GET /jobs/{id}", natsjobs.StatusHandler(q))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	want := Report{Rows: 1000, Digest: hashOf("report", 1000)}

	resp := postResponse(t, ctx, srv.URL+"/later", `{"rows": 1000}`)
	require.Equal(t, http.StatusAccepted, resp.StatusCode)
	location := resp.Header.Get("Location")
	require.True(t, strings.HasPrefix(location, "/jobs/"), "Location: %q", location)
	var accepted jobStatus
	require.NoError(t, json.Unmarshal([]byte(readBody(t, resp)), &accepted))
	id := path.Base(location)
	assert.Equal(t, id, accepted.ID)
	assert.Equal(t, "report", accepted.Task)

	report, err := natsjobs.Wait(ctx, q, ExportReport, natsjobs.ID(id))
	require.NoError(t, err)
	assert.Equal(t, want, report)
	code, body := get(t, srv.URL+location)
	require.Equal(t, http.StatusOK, code, body)
	var done jobStatus
	require.NoError(t, json.Unmarshal([]byte(body), &done))
	assert.Equal(t, jobStatus{ID: id, Task: "report", State: "succeeded", Attempt: 1, Result: &want}, done)

	code, body = post(t, ctx, srv.URL+"/reports", `{"rows": 1000}`)
	require.Equal(t, http.StatusOK, code, body)
	var ready Report
	require.NoError(t, json.Unmarshal([]byte(body), &ready))
	assert.Equal(t, want, ready)

	code, body = post(t, ctx, srv.URL+"/reports", `{"rows": 0}`)
	assert.Equal(t, http.StatusBadRequest, code, body)
	code, body = get(t, srv.URL+"/jobs/nosuchjob")
	assert.Equal(t, http.StatusNotFound, code, body)
}

// jobStatus is the part of StatusHandler's JSON the test reads.
type jobStatus struct {
	ID      string  `json:"id"`
	Task    string  `json:"task"`
	State   string  `json:"state"`
	Attempt int     `json:"attempt"`
	Result  *Report `json:"result"`
}

// startWorker starts a worker service on the NATS server at url: this
// test binary, started as the service's docs say, with one worker
// process of its own. It ends with the test, and must exit 0 on SIGTERM.
func startWorker(t *testing.T, url string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-role", "worker", "-nats", url, "-workers", "1")
	cmd.Env = append(os.Environ(), runMainEnv+"=1")
	output := &testkit.Buffer{}
	cmd.Stdout, cmd.Stderr = output, output
	require.NoError(t, cmd.Start())
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-exited:
			assert.NoError(t, err, "the worker service's exit after SIGTERM")
		case <-time.After(time.Minute):
			_ = cmd.Process.Kill()
			<-exited
			t.Error("the worker service did not exit within a minute of SIGTERM")
		}
		if t.Failed() {
			t.Logf("the worker service said:\n%s", output)
		}
	})
}

// get fetches url and returns the answer's status and body.
func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	return resp.StatusCode, readBody(t, resp)
}
