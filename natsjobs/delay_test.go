package natsjobs_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/internal/testkit"
	"github.com/offloadgo/offload/natsjobs"
	"github.com/offloadgo/offload/natsremote/embedded"
	"github.com/offloadgo/offload/pool"
)

// stamped returns when it started.
var stamped = pool.Register("natsjobs.stamped", func(_ context.Context, in Keyed) (time.Time, error) {
	ran(in.Key)
	return time.Now(), nil
})

// scheduledJobs is how many messages the schedules stream of queue
// "jobs" holds: schedules, and due jobs not yet past Retention.
func scheduledJobs(t *testing.T, nc *nats.Conn) uint64 {
	t.Helper()
	return storedMsgs(t, nc, "OFFLOAD_JOBS_jobs_SCHEDULED")
}

// assertScheduledBefore asserts that job id is Scheduled, if the read of
// its status ends before due (a slow machine may read it later).
func assertScheduledBefore(t *testing.T, q *natsjobs.Queue, id natsjobs.ID, due time.Time) {
	t.Helper()
	st, err := q.Status(testkit.Ctx(t), id)
	require.NoError(t, err)
	if time.Now().Before(due) {
		assert.Equal(t, natsjobs.Scheduled, st.State)
		assert.Equal(t, "natsjobs.stamped", st.Task)
		assert.False(t, st.Enqueued.IsZero())
	}
}

// assertRanWhenDue waits for stamped job id and asserts that it started
// no sooner than earliest, and succeeded at attempt 1. How late it started
// is logged, not asserted, so that the test passes on a busy machine:
// bench's BenchmarkJobsDelayLateness measures it.
func assertRanWhenDue(t *testing.T, q *natsjobs.Queue, id natsjobs.ID, earliest, latest time.Time) {
	t.Helper()
	ctx := testkit.Ctx(t)
	started, err := natsjobs.Wait(ctx, q, stamped, id)
	require.NoError(t, err)
	t.Logf("started %v after due; finished %v after", started.Sub(earliest), time.Since(latest))
	assert.False(t, started.Before(earliest), "started %v before due %v", started, earliest)
	st, err := q.Status(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, natsjobs.Succeeded, st.State)
	assert.Equal(t, 1, st.Attempt)
}

func TestDelayedJobRunsWhenDue(t *testing.T) {
	t.Parallel()
	q, _ := startQueue(t, natsjobs.Options{})
	serve(t, q, newPool(t, pool.Options{Workers: 1}), natsjobs.ServeOptions{})
	ctx := testkit.Ctx(t)
	const delay = 1500 * time.Millisecond
	earliest := time.Now().Add(delay)
	id, err := natsjobs.Enqueue(ctx, q, stamped, Keyed{Key: key(t)}, natsjobs.Delay(delay))
	require.NoError(t, err)
	latest := time.Now().Add(delay)
	assertScheduledBefore(t, q, id, earliest)
	assertRanWhenDue(t, q, id, earliest, latest)
	assert.Equal(t, 1, runCount(key(t)))
}

// A job scheduled when the server restarts is still there after it, and
// runs when due.
func TestDelayedJobSurvivesServerRestart(t *testing.T) {
	t.Parallel()
	s, nc := startRestartable(t)
	q := open(t, nc, natsjobs.Options{})
	ctx := testkit.Ctx(t)
	due := time.Now().Add(4 * time.Second)
	id, err := natsjobs.Enqueue(ctx, q, stamped, Keyed{Key: key(t)}, natsjobs.At(due))
	require.NoError(t, err)
	assertScheduledBefore(t, q, id, due)

	restart(t, s, nc)
	if !time.Now().Before(due) {
		// Still a test of the schedule kept across the restart, which
		// the server fires as it comes back.
		t.Logf("the restart took past the job's due time")
	}
	assertScheduledBefore(t, q, id, due)
	serve(t, q, newPool(t, pool.Options{Workers: 1}), natsjobs.ServeOptions{})
	assertRanWhenDue(t, q, id, due, due)

	// Its due copy, still in the schedules stream, does not run it again
	// after another restart: a job due after it has run, on one worker.
	restart(t, s, nc)
	later, err := natsjobs.Enqueue(ctx, q, stamped, Keyed{Key: key(t) + "/later"}, natsjobs.Delay(100*time.Millisecond))
	require.NoError(t, err)
	_, err = natsjobs.Wait(ctx, q, stamped, later)
	require.NoError(t, err)
	assert.Equal(t, 1, runCount(key(t)))
}

// A job that falls due while the queue holds MaxJobs jobs waits, Queued,
// outside it, and enters and runs once there is room.
func TestDueJobWaitsForRoomInAFullQueue(t *testing.T) {
	t.Parallel()
	q, nc := startQueue(t, natsjobs.Options{MaxJobs: 1})
	ctx := testkit.Ctx(t)
	first, err := natsjobs.Enqueue(ctx, q, double, Num{1})
	require.NoError(t, err)
	_, err = natsjobs.Enqueue(ctx, q, double, Num{2})
	require.ErrorIs(t, err, pool.ErrQueueFull)
	var ids []natsjobs.ID // the second is cancelled while it waits for room
	for _, k := range []string{key(t), key(t) + "/canceled", key(t) + "/last"} {
		id, err := natsjobs.Enqueue(ctx, q, stamped, Keyed{Key: k}, natsjobs.Delay(200*time.Millisecond))
		require.NoError(t, err, "a scheduled job does not count against MaxJobs")
		ids = append(ids, id)
	}
	for _, id := range ids {
		require.Eventually(t, func() bool {
			st, err := q.Status(ctx, id)
			return err == nil && st.State == natsjobs.Queued
		}, 20*time.Second, 10*time.Millisecond, "due, and waiting for room")
	}
	assert.EqualValues(t, 1, queuedJobs(t, nc), "the due jobs are not in the full queue")
	require.NoError(t, q.Cancel(ctx, ids[1]))

	serve(t, q, newPool(t, pool.Options{Workers: 1}), natsjobs.ServeOptions{})
	out, err := natsjobs.Wait(ctx, q, double, first)
	require.NoError(t, err)
	assert.Equal(t, 2, out)
	started, err := natsjobs.Wait(ctx, q, stamped, ids[0])
	require.NoError(t, err)
	if st, err := q.Status(ctx, first); err == nil {
		t.Logf("the due job started %v after the queue had room", started.Sub(st.Finished))
	}
	_, err = natsjobs.Wait(ctx, q, stamped, ids[2])
	require.NoError(t, err, "it entered after the cancelled one would have")
	_, err = natsjobs.Wait(ctx, q, stamped, ids[1])
	require.ErrorIs(t, err, natsjobs.ErrCanceled)
	assert.Equal(t, 1, runCount(key(t)))
	assert.Zero(t, runCount(key(t)+"/canceled"))
	assert.Equal(t, 1, runCount(key(t)+"/last"))
}

// A scheduled job cancelled never runs.
func TestCancelScheduled(t *testing.T) {
	t.Parallel()
	q, nc := startQueue(t, natsjobs.Options{})
	ctx := testkit.Ctx(t)
	id, err := natsjobs.Enqueue(ctx, q, stamped, Keyed{Key: key(t)}, natsjobs.Delay(time.Second))
	require.NoError(t, err)
	requireCancelsOnce(ctx, t, q, id)
	assert.Zero(t, scheduledJobs(t, nc), "out of the schedules stream")

	// A job due later, on one worker, runs after the cancelled one would
	// have: then it has not.
	later, err := natsjobs.Enqueue(ctx, q, stamped, Keyed{Key: key(t) + "/later"}, natsjobs.Delay(time.Second))
	require.NoError(t, err)
	serve(t, q, newPool(t, pool.Options{Workers: 1}), natsjobs.ServeOptions{})
	_, err = natsjobs.Wait(ctx, q, stamped, later)
	require.NoError(t, err)
	requireCanceledUnrun(ctx, t, q, stamped, id)
}

// Key and Delay together: the second Enqueue with the key schedules
// nothing and returns the first job's id.
func TestKeyWithDelay(t *testing.T) {
	t.Parallel()
	q, nc := startQueue(t, natsjobs.Options{})
	ctx := testkit.Ctx(t)
	first, err := natsjobs.Enqueue(ctx, q, stamped, Keyed{Key: key(t)}, natsjobs.Key("once"), natsjobs.Delay(500*time.Millisecond))
	require.NoError(t, err)
	again, err := natsjobs.Enqueue(ctx, q, stamped, Keyed{Key: key(t)}, natsjobs.Key("once"), natsjobs.Delay(500*time.Millisecond))
	require.NoError(t, err)
	assert.Equal(t, first, again)
	assert.EqualValues(t, 1, scheduledJobs(t, nc))

	serve(t, q, newPool(t, pool.Options{Workers: 1}), natsjobs.ServeOptions{})
	_, err = natsjobs.Wait(ctx, q, stamped, first)
	require.NoError(t, err)
	assert.Equal(t, 1, runCount(key(t)))
	require.Eventually(t, func() bool { return queuedJobs(t, nc) == 0 }, 20*time.Second, 5*time.Millisecond,
		"one job, acked once its record was written")
}

// Delay(0) and a time not in the future run the job now: it is queued
// at once, with no schedule. The last Delay or At wins.
func TestDelayZeroAndAtPastRunNow(t *testing.T) {
	t.Parallel()
	q, nc := startQueue(t, natsjobs.Options{})
	ctx := testkit.Ctx(t)
	for i, opts := range [][]natsjobs.EnqueueOption{
		{natsjobs.Delay(0)},
		{natsjobs.At(time.Now().Add(-time.Hour))},
		{natsjobs.At(time.Time{})},
		{natsjobs.At(time.Now().Add(time.Hour)), natsjobs.Delay(0)},
		{natsjobs.Delay(time.Hour), natsjobs.At(time.Now())},
	} {
		id, err := natsjobs.Enqueue(ctx, q, double, Num{i}, opts...)
		require.NoError(t, err)
		st, err := q.Status(ctx, id)
		require.NoError(t, err)
		assert.Equal(t, natsjobs.Queued, st.State, "options %d", i)
	}
	assert.EqualValues(t, 5, queuedJobs(t, nc))
	assert.Zero(t, scheduledJobs(t, nc))
}

// A negative Delay fails Enqueue with a clear error, and stores nothing
// (nor claims the key).
func TestNegativeDelayFails(t *testing.T) {
	t.Parallel()
	q, nc := startQueue(t, natsjobs.Options{})
	ctx := testkit.Ctx(t)
	_, err := natsjobs.Enqueue(ctx, q, double, Num{1}, natsjobs.Key("k"), natsjobs.Delay(-time.Second))
	require.EqualError(t, err, `natsjobs: Enqueue of task "natsjobs.double": negative Delay -1s`)
	assert.Zero(t, queuedJobs(t, nc))
	assert.Zero(t, scheduledJobs(t, nc))
	id, err := natsjobs.Enqueue(ctx, q, double, Num{1}, natsjobs.Key("k"))
	require.NoError(t, err)
	st, err := q.Status(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, natsjobs.Queued, st.State, "the key was free")
}

// A job due in an hour is Scheduled until then; cancelled, it never runs.
func ExampleDelay() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "natsjobs-example")
	defer os.RemoveAll(dir)
	server, _ := embedded.Start(embedded.Options{StoreDir: dir})
	defer server.Shutdown()
	nc, _ := server.Connect()
	defer nc.Close()
	q, err := natsjobs.Open(ctx, nc, natsjobs.Options{Name: "reminders"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer q.Close()

	id, err := natsjobs.Enqueue(ctx, q, ExportReport, Report{Customer: "acme"}, natsjobs.Delay(time.Hour))
	if err != nil {
		fmt.Println(err)
		return
	}
	st, _ := q.Status(ctx, id)
	fmt.Println(st.State)
	fmt.Println(q.Cancel(ctx, id))
	_, err = natsjobs.Wait(ctx, q, ExportReport, id)
	fmt.Println(err)
	// Output:
	// scheduled
	// <nil>
	// natsjobs: job was canceled
}
