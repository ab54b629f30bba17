package natsremote_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/natsremote"
	"github.com/offloadgo/offload/natsremote/embedded"
	"github.com/offloadgo/offload/pool"
)

// brokenNode serves pool on s from a Subprocess pool of workers slots
// whose worker process never starts: its StartTimeout ends before any
// handshake, so every call it takes fails with ErrWorkerStartFailed there,
// and nothing runs.
func brokenNode(t *testing.T, s *embedded.Server, poolName, name string, workers int) {
	t.Helper()
	serve(t, s, natsremote.ServeOptions{Pool: poolName, Name: name, Local: pool.Options{
		Workers: workers, Isolation: pool.Subprocess, Subprocess: pool.SubprocessOptions{StartTimeout: time.Nanosecond},
	}})
}

// callTargets lists the node subjects the calls seen from index from on
// went to, in order.
func (w *tap) callTargets(from int, poolName string) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	for _, e := range w.seen[from:] {
		kind, subject, _ := strings.Cut(e, " ")
		if kind == "call" && strings.HasPrefix(subject, "offload."+poolName+".node.") {
			out = append(out, subject)
		}
	}
	return out
}

// A call whose worker process does not start on its node never ran: it
// fails with ErrWorkerStartFailed (not ErrWorkerCrashed), which WriteError
// answers 503, once it has gone to each live node, at most three, and to
// none twice.
func TestNodeWorkerThatDidNotStart(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ nodes, tries int }{{1, 1}, {2, 2}, {4, 3}} {
		t.Run(fmt.Sprintf("%d nodes", tt.nodes), func(t *testing.T) {
			t.Parallel()
			k := keysFor("nostart")
			s := startServer(t, embedded.Options{})
			w := wiretap(t, connect(t, s))
			for i := range tt.nodes {
				brokenNode(t, s, "nostart", fmt.Sprintf("n%d", i+1), 1)
			}
			nc := connect(t, s)
			p := remotePool(t, nc, "nostart", pool.Options{Workers: 1})
			waitNodes(t, p, tt.nodes)

			before := w.mark(t, nc)
			key := k("call")
			_, err := pool.Run(testCtx(t), p, tallySleep, tallyIn{Key: key})
			require.ErrorIs(t, err, pool.ErrWorkerStartFailed)
			assert.NotErrorIs(t, err, pool.ErrWorkerCrashed, "nothing ran: the worker did not crash under the task")
			assert.True(t, strings.HasPrefix(err.Error(), "pool: worker did not start: on "), err.Error())
			assert.Contains(t, err.Error(), "workerproc: start worker 1: ")
			assert.Equal(t, 1, strings.Count(err.Error(), "did not start"), err.Error())
			if tt.tries > 1 {
				assert.Contains(t, err.Error(), fmt.Sprintf("on %d nodes, the last node n", tt.tries))
			}
			t.Log(err)

			rec := httptest.NewRecorder()
			pool.WriteError(rec, err)
			assert.Equal(t, http.StatusServiceUnavailable, rec.Code)
			assert.NotEmpty(t, rec.Header().Get("Retry-After"))

			w.mark(t, nc)
			targets := w.callTargets(before, "nostart")
			assert.Len(t, targets, tt.tries, "the call goes to each node once, to at most three: %v", targets)
			assert.ElementsMatch(t, uniq(targets), targets, "no node is sent the call twice")
			assert.Equal(t, tt.tries, w.count(before, "not-started", "_INBOX."))
			assert.Zero(t, runsOf(key))
		})
	}
}

// A call whose worker process does not start on one node runs on
// another, once.
func TestNodeWorkerThatDidNotStartRunsElsewhere(t *testing.T) {
	t.Parallel()
	k := keysFor("nostart-elsewhere")
	s := startServer(t, embedded.Options{})
	w := wiretap(t, connect(t, s))
	// The broken node has more free slots, so that every call tries it
	// first (by power of two choices between the names).
	brokenNode(t, s, "nostart-elsewhere", "broken", 4)
	serve(t, s, natsremote.ServeOptions{Pool: "nostart-elsewhere", Name: "healthy", Local: pool.Options{Workers: 1}})
	nc := connect(t, s)
	p := remotePool(t, nc, "nostart-elsewhere", pool.Options{Workers: 1})
	waitNodes(t, p, 2)

	before := w.mark(t, nc)
	const calls = 3
	ctx := testCtx(t)
	for i := range calls {
		key := k(fmt.Sprint(i))
		out, err := pool.Run(ctx, p, tallySleep, tallyIn{Key: key})
		require.NoError(t, err)
		assert.Equal(t, key+"!", out)
		assert.EqualValues(t, 1, runsOf(key), "the call runs once")
	}
	w.mark(t, nc)
	notStarted := w.count(before, "not-started", "_INBOX.")
	require.Positive(t, notStarted, "a call should have met the broken node")
	t.Logf("%d of %d calls went to the broken node first", notStarted, calls)
	assert.Len(t, w.callTargets(before, "nostart-elsewhere"), calls+notStarted, "each call goes to the healthy node once")
	assert.Equal(t, calls, w.count(before, "result", "_INBOX."))
}

// uniq is ss without repeats, in order.
func uniq(ss []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range ss {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}
