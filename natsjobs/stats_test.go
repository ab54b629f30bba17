package natsjobs_test

import (
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/internal/testkit"
	"github.com/offloadgo/offload/natsjobs"
	"github.com/offloadgo/offload/pool"
)

// heard keeps the JobEvents a queue hands to its hook, and tells when
// one comes.
type heard struct {
	mu     sync.Mutex
	events []natsjobs.JobEvent
	came   chan struct{}
}

func newHeard() *heard { return &heard{came: make(chan struct{}, 1)} }

func (h *heard) hook(ev natsjobs.JobEvent) {
	h.mu.Lock()
	h.events = append(h.events, ev)
	h.mu.Unlock()
	select {
	case h.came <- struct{}{}:
	default:
	}
}

// kinds are the kinds of job id's events, in the order they came.
func (h *heard) kinds(id natsjobs.ID) []natsjobs.JobEventKind {
	h.mu.Lock()
	defer h.mu.Unlock()
	var kinds []natsjobs.JobEventKind
	for _, ev := range h.events {
		if ev.ID == id {
			kinds = append(kinds, ev.Kind)
		}
	}
	return kinds
}

// waitFor waits until job id has had an event of kind.
func (h *heard) waitFor(t *testing.T, id natsjobs.ID, kind natsjobs.JobEventKind) {
	t.Helper()
	ctx := testkit.Ctx(t)
	for {
		for _, k := range h.kinds(id) {
			if k == kind {
				return
			}
		}
		select {
		case <-h.came:
		case <-ctx.Done():
			t.Fatalf("job %s had no %s event; it had %v", id, kind, h.kinds(id))
		}
	}
}

// Each job's events come in its life's order, each logged and counted
// once by task, in the process that made it; Stats also reads the work
// stream's depth and its oldest job's age from the server.
func TestStatsAndEventsFollowEachJob(t *testing.T) {
	t.Parallel()
	_, nc := startJetStream(t)
	h := newHeard()
	var log testkit.Buffer // Serve writes while the test reads
	q := open(t, nc, natsjobs.Options{OnJobEvent: h.hook,
		Logger: slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	ctx := testkit.Ctx(t)
	succeeds, err := natsjobs.Enqueue(ctx, q, double, Num{N: 21})
	require.NoError(t, err)
	dies, err := natsjobs.Enqueue(ctx, q, always, Keyed{Key: key(t)}, natsjobs.MaxAttempts(2))
	require.NoError(t, err)
	canceled, err := natsjobs.Enqueue(ctx, q, sleepy, Keyed{Key: key(t), Sleep: time.Minute})
	require.NoError(t, err)
	require.NoError(t, q.Cancel(ctx, canceled))

	st, err := q.Stats(ctx)
	require.NoError(t, err)
	assert.Equal(t, 2, st.Depth, "the canceled job left the stream")
	assert.Positive(t, st.Oldest)
	assert.Equal(t, pool.JobTaskStats{Enqueued: 1, Canceled: 1}, st.Tasks[sleepy.Name()])

	serve(t, q, newPool(t, pool.Options{Workers: 2}), natsjobs.ServeOptions{})
	out, err := natsjobs.Wait(ctx, q, double, succeeds)
	require.NoError(t, err)
	assert.Equal(t, 42, out)
	_, err = natsjobs.Wait(ctx, q, always, dies)
	require.ErrorIs(t, err, natsjobs.ErrDead)
	h.waitFor(t, succeeds, natsjobs.JobSucceeded)
	h.waitFor(t, dies, natsjobs.JobDead)

	E, S, OK, R, D, C := natsjobs.JobEnqueued, natsjobs.JobStarted, natsjobs.JobSucceeded, natsjobs.JobRetried, natsjobs.JobDead, natsjobs.JobCanceled
	assert.Equal(t, []natsjobs.JobEventKind{E, S, OK}, h.kinds(succeeds))
	assert.Equal(t, []natsjobs.JobEventKind{E, S, R, S, D}, h.kinds(dies))
	assert.Equal(t, []natsjobs.JobEventKind{E, C}, h.kinds(canceled))

	st, err = q.Stats(ctx)
	require.NoError(t, err)
	d := st.Tasks[double.Name()]
	assert.Equal(t, uint64(1), d.RunTime.Count)
	assert.Positive(t, d.RunTime.Max)
	d.RunTime = pool.Summary{}
	assert.Equal(t, pool.JobTaskStats{Enqueued: 1, Started: 1, Succeeded: 1}, d)
	a := st.Tasks[always.Name()]
	assert.Equal(t, uint64(2), a.RunTime.Count, "both attempts ran")
	a.RunTime = pool.Summary{}
	assert.Equal(t, pool.JobTaskStats{Enqueued: 1, Started: 2, Retried: 1, Dead: 1}, a)
	assert.Equal(t, pool.JobTaskStats{Enqueued: 1, Canceled: 1}, st.Tasks[sleepy.Name()])

	text := log.String()
	assert.Contains(t, text, `level=WARN msg="natsjobs: job `+string(dies)+` dead" queue=jobs job=`+string(dies)+` task=natsjobs.always event=dead attempt=2 took=`)
	assert.Contains(t, text, `err="still broken"`)
	assert.Contains(t, text, `level=INFO msg="natsjobs: job `+string(dies)+` retried"`)
	assert.Contains(t, text, `level=INFO msg="natsjobs: job `+string(canceled)+` canceled"`)
	assert.Contains(t, text, `level=DEBUG msg="natsjobs: job `+string(succeeds)+` succeeded"`)
}

// A job's event kinds read as the words the logs use.
func TestJobEventKindNames(t *testing.T) {
	t.Parallel()
	for kind, want := range map[natsjobs.JobEventKind]string{
		natsjobs.JobEnqueued: "enqueued", natsjobs.JobStarted: "started", natsjobs.JobSucceeded: "succeeded",
		natsjobs.JobRetried: "retried", natsjobs.JobDead: "dead", natsjobs.JobCanceled: "canceled",
		0: "none", 99: "JobEventKind(99)",
	} {
		assert.Equal(t, want, kind.String())
	}
}
