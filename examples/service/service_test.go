package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/internal/promtest"
	"github.com/offloadgo/offload/internal/testkit"
	"github.com/offloadgo/offload/natsremote"
	"github.com/offloadgo/offload/natsremote/embedded"
)

// The service's handlers over each pool it makes, one worker wide:
// worker processes (this test binary, re-executed), and a worker node
// process reached through a NATS server on 127.0.0.1. Each answers 200
// with the right sum, 503 from Shed once the pool is full, 504 past the
// deadline, and its /metrics count what happened.
func TestService(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		nodes func(t *testing.T) *nats.Conn
	}{
		{"subprocess", func(*testing.T) *nats.Conn { return nil }},
		{"remote", func(t *testing.T) *nats.Conn {
			nc, err := nats.Connect(startNode(t))
			require.NoError(t, err)
			t.Cleanup(nc.Close)
			return nc
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p, err := newPool(1, tc.nodes(t))
			require.NoError(t, err)
			t.Cleanup(func() { _ = p.Close() })
			if tc.name == "remote" {
				require.Eventually(t, func() bool { return len(p.Nodes()) == 1 }, time.Minute, 10*time.Millisecond,
					"the pool should find its node")
			}
			metrics, err := metricsHandler(p)
			require.NoError(t, err)
			mux := http.NewServeMux()
			mux.Handle("POST /hash", hashHandler(p, time.Minute))
			mux.Handle("GET /metrics", metrics)
			srv := httptest.NewServer(mux)
			t.Cleanup(srv.Close)

			const served = 3
			for i := range served {
				body := "body " + strconv.Itoa(i)
				code, got := post(t, context.Background(), srv.URL+"/hash?rounds=1000", body)
				require.Equal(t, http.StatusOK, code, got)
				assert.Equal(t, hashOf(body, 1000)+"\n", got)
			}
			code, _ := post(t, context.Background(), srv.URL+"/hash?rounds=0", "")
			assert.Equal(t, http.StatusBadRequest, code, "rounds=0")

			// Fill the pool (one running, one queued) with tasks that run
			// until their callers hang up: the next request is shed.
			fill, hangUp := context.WithCancel(testkit.Ctx(t))
			var filling sync.WaitGroup
			for range 2 {
				filling.Go(func() {
					_, _ = post(t, fill, srv.URL+"/hash?rounds="+strconv.Itoa(maxRounds), "fill")
				})
			}
			require.Eventually(t, func() bool { return p.Load().InFlight == 2 }, time.Minute, time.Millisecond,
				"the two long requests should fill the pool")
			resp := postResponse(t, context.Background(), srv.URL+"/hash", "shed")
			assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode, "a request to a full pool")
			assert.NotEmpty(t, resp.Header.Get("Retry-After"))
			readBody(t, resp)
			hangUp()
			filling.Wait()
			require.Eventually(t, func() bool { return p.Load().InFlight == 0 }, time.Minute, time.Millisecond,
				"the tasks of the requests that hung up should end")

			// The same pool behind a handler whose deadline no task of
			// maxRounds can meet.
			late := httptest.NewServer(hashHandler(p, 50*time.Millisecond))
			t.Cleanup(late.Close)
			code, _ = post(t, context.Background(), late.URL+"?rounds="+strconv.Itoa(maxRounds), "late")
			assert.Equal(t, http.StatusGatewayTimeout, code, "a task past its deadline")

			m := promtest.Scrape(t, srv.URL+"/metrics")
			assert.Equal(t, float64(served), value(t, m, "offload_task_runs_total", "task", "hash", "outcome", "completed"))
			assert.Equal(t, float64(served), value(t, m, "offload_completed_total"))
			assert.Equal(t, 1.0, value(t, m, "offload_shed_total", "reason", "queue_full"))
			// The two that hung up and the one past its deadline (which
			// a busy machine may have delayed past it before admission).
			assert.Equal(t, 3.0, value(t, m, "offload_canceled_total")+value(t, m, "offload_rejected_total"))
			assert.Zero(t, value(t, m, "offload_failed_total"))
		})
	}
}

// startNode starts an embedded NATS server listening on 127.0.0.1 and a
// worker node process on it (this test binary, started as the service's
// docs say, with worker processes of its own), and returns the server's
// URL. Both end with the test.
func startNode(t *testing.T) string {
	t.Helper()
	s, err := embedded.Start(embedded.Options{Listen: true})
	require.NoError(t, err)
	t.Cleanup(s.Shutdown)

	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(),
		natsremote.EnvURL+"="+s.ClientURL(),
		natsremote.EnvPool+"="+natsPool,
		natsremote.EnvWorkers+"=1",
		natsremote.EnvIsolation+"=subprocess",
		natsremote.EnvMemoryLimit+"=256MiB",
		natsremote.EnvTerminateGrace+"=100ms",
		natsremote.EnvDrain+"=25s",
	)
	output := &testkit.Buffer{}
	cmd.Stdout, cmd.Stderr = output, output
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("the node process said:\n%s", output)
		}
	})
	return s.ClientURL()
}

// post sends body to url and returns the answer's status and body.
func post(t *testing.T, ctx context.Context, url, body string) (int, string) {
	t.Helper()
	resp := postResponse(t, ctx, url, body)
	if resp == nil {
		return 0, ""
	}
	return resp.StatusCode, readBody(t, resp)
}

// postResponse sends body to url; nil when ctx ended first.
func postResponse(t *testing.T, ctx context.Context, url, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	if ctx.Err() != nil {
		return nil
	}
	require.NoError(t, err)
	return resp
}

// hashOf is what /hash should answer for body and rounds.
func hashOf(body string, rounds int) string {
	sum := sha256.Sum256([]byte(body))
	for range rounds - 1 {
		sum = sha256.Sum256(sum[:])
	}
	return hex.EncodeToString(sum[:])
}

// value is the value of the series of family name whose labels include
// the pairs of label and value in labels.
func value(t *testing.T, families map[string]*dto.MetricFamily, name string, labels ...string) float64 {
	t.Helper()
	f := families[name]
	require.NotNil(t, f, "no family %s", name)
	want := map[string]string{"pool": "hash"}
	for i := 0; i+1 < len(labels); i += 2 {
		want[labels[i]] = labels[i+1]
	}
next:
	for _, m := range f.Metric {
		have := map[string]string{}
		for _, l := range m.Label {
			have[l.GetName()] = l.GetValue()
		}
		for k, v := range want {
			if have[k] != v {
				continue next
			}
		}
		if m.Counter != nil {
			return m.Counter.GetValue()
		}
		return m.Gauge.GetValue()
	}
	t.Fatalf("no series %s%v", name, want)
	return 0
}
