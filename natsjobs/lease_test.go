package natsjobs_test

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/internal/testkit"
	"github.com/offloadgo/offload/natsjobs"
	"github.com/offloadgo/offload/pool"
)

// A job that runs for several leases, with an idle worker beside its
// own, runs once: its worker renews the lease while it runs.
func TestLongJobHeartbeatsAndRunsOnce(t *testing.T) {
	t.Parallel()
	q, _ := startQueue(t, natsjobs.Options{Lease: 500 * time.Millisecond})
	serve(t, q, newPool(t, pool.Options{Workers: 1}), natsjobs.ServeOptions{})
	serve(t, q, newPool(t, pool.Options{Workers: 1}), natsjobs.ServeOptions{})
	ctx := testkit.Ctx(t)
	id, err := natsjobs.Enqueue(ctx, q, sleepy, Keyed{Key: key(t), Sleep: 1500 * time.Millisecond})
	require.NoError(t, err)
	out, err := natsjobs.Wait(ctx, q, sleepy, id)
	require.NoError(t, err)
	assert.Equal(t, "slept", out)
	assert.Equal(t, 1, runCount(key(t)))
	st, err := q.Status(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, 1, st.Attempt)
}

// A job of a task this binary lacks goes back, again and again, without
// using an attempt: it waits for a worker that has the task.
func TestUnknownTaskIsNotConsumed(t *testing.T) {
	t.Parallel()
	q, nc := startQueue(t, natsjobs.Options{})
	ctx := testkit.Ctx(t)
	js := publishJob(t, nc, "later1", "natsjobs.notinthisbuild")

	serve(t, q, newPool(t, pool.Options{Workers: 1}), natsjobs.ServeOptions{})
	cons, err := js.Consumer(ctx, "OFFLOAD_JOBS_jobs", "workers")
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		info, err := cons.Info(ctx)
		return err == nil && info.NumRedelivered >= 1
	}, 20*time.Second, 20*time.Millisecond, "delivered, handed back, delivered again")
	st, err := q.Status(ctx, "later1")
	require.NoError(t, err)
	assert.Equal(t, natsjobs.Queued, st.State)
	assert.Zero(t, st.Attempt)
	assert.EqualValues(t, 1, queuedJobs(t, nc))
}

// A job of a task no worker has had for the grace (an hour; here, none)
// is dead, saying so.
func TestUnknownTaskIsBuriedAfterItsGrace(t *testing.T) {
	t.Parallel()
	q, nc := startQueue(t, natsjobs.Options{})
	natsjobs.SetUnknownTaskGraceForTest(q, 0)
	ctx := testkit.Ctx(t)
	publishJob(t, nc, "never1", "natsjobs.notinthisbuild")
	serve(t, q, newPool(t, pool.Options{Workers: 1}), natsjobs.ServeOptions{})
	require.Eventually(t, func() bool {
		st, err := q.Status(ctx, "never1")
		return err == nil && st.State == natsjobs.Dead
	}, 20*time.Second, 5*time.Millisecond)
	st, err := q.Status(ctx, "never1")
	require.NoError(t, err)
	assert.Equal(t, `natsjobs: no worker had task "natsjobs.notinthisbuild" for 0s`, st.Err)
	assert.Zero(t, st.Attempt, "it never ran")
	dead, err := q.List(ctx, natsjobs.Dead, 10)
	require.NoError(t, err)
	require.Len(t, dead, 1)
}

// Garbage on the jobs' subjects is dropped, not retried.
func TestGarbageIsDropped(t *testing.T) {
	t.Parallel()
	q, nc := startQueue(t, natsjobs.Options{})
	ctx := testkit.Ctx(t)
	js := jetStream(t, nc)
	_, err := js.Publish(ctx, "offload.jobs.jobs.job.notask", []byte("garbage"))
	require.NoError(t, err)
	msg := &nats.Msg{Subject: "offload.jobs.jobs.job.badinput", Data: []byte{0xc1}, Header: nats.Header{}}
	msg.Header.Set("Offload-Task", "natsjobs.double")
	_, err = js.PublishMsg(ctx, msg)
	require.NoError(t, err)
	var log testkit.Buffer
	serve(t, q, newPool(t, pool.Options{Workers: 1}), natsjobs.ServeOptions{Logger: slog.New(slog.NewTextHandler(&log, nil))})
	_, err = natsjobs.Wait(ctx, q, double, "badinput")
	require.ErrorIs(t, err, natsjobs.ErrDead)
	assert.ErrorContains(t, err, `decode input of task "natsjobs.double"`)
	require.Eventually(t, func() bool { return queuedJobs(t, nc) == 0 }, 20*time.Second, 10*time.Millisecond)
	_, err = q.Status(ctx, "notask")
	assert.ErrorIs(t, err, natsjobs.ErrNotFound)
	assert.Contains(t, log.String(), `level=WARN msg="natsjobs: dropped a message that is no job" queue=jobs subject=offload.jobs.jobs.job.notask err="natsjobs: job notask names no task"`)
}

// Jobs queued when the server restarts are all there after it, and run.
func TestServerRestartLosesNoJob(t *testing.T) {
	t.Parallel()
	const jobs, publishers = 10_000, 8
	s, nc := startRestartable(t)
	q := open(t, nc, natsjobs.Options{})
	// 10,000 jobs take 10–20 s here alone, and several times that on a
	// busy machine: the bound is against a hang, not a speed target.
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	ids := make([]natsjobs.ID, jobs)
	var g group
	for w := range publishers {
		g.Go(func() error {
			for i := w; i < jobs; i += publishers {
				var err error
				if ids[i], err = natsjobs.Enqueue(ctx, q, double, Num{i}); err != nil {
					return err
				}
			}
			return nil
		})
	}
	require.NoError(t, g.Wait())
	restart(t, s, nc)
	assert.EqualValues(t, jobs, queuedJobs(t, nc), "every job stored before the restart")

	serve(t, q, newPool(t, pool.Options{Workers: 8}), natsjobs.ServeOptions{})
	for w := range publishers {
		g.Go(func() error {
			for i := w; i < jobs; i += publishers {
				out, err := natsjobs.Wait(ctx, q, double, ids[i])
				if err != nil {
					return fmt.Errorf("job %d: %w", i, err)
				}
				if out != 2*i {
					return fmt.Errorf("job %d: got %d", i, out)
				}
			}
			return nil
		})
	}
	require.NoError(t, g.Wait())
}

// A Subprocess pool runs jobs in worker processes (this test binary).
func TestSubprocessPool(t *testing.T) {
	t.Parallel()
	q, _ := startQueue(t, natsjobs.Options{})
	p := newPool(t, pool.Options{Workers: 1, Isolation: pool.Subprocess})
	serve(t, q, p, natsjobs.ServeOptions{})
	ctx := testkit.Ctx(t)
	ids := make([]natsjobs.ID, 3)
	for i := range ids {
		var err error
		ids[i], err = natsjobs.Enqueue(ctx, q, double, Num{i + 1})
		require.NoError(t, err)
	}
	for i, id := range ids {
		out, err := natsjobs.Wait(ctx, q, double, id)
		require.NoError(t, err)
		assert.Equal(t, 2*(i+1), out)
	}
	id, err := natsjobs.Enqueue(ctx, q, panicky, Keyed{})
	require.NoError(t, err)
	_, err = natsjobs.Wait(ctx, q, panicky, id)
	require.ErrorIs(t, err, natsjobs.ErrDead)
	assert.ErrorContains(t, err, "boom in the task")
}

// group runs functions and reports the first error, as errgroup does.
type group struct {
	wg   sync.WaitGroup
	once sync.Once
	err  error
}

func (g *group) Go(f func() error) {
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		if err := f(); err != nil {
			g.once.Do(func() { g.err = err })
		}
	}()
}

func (g *group) Wait() error {
	g.wg.Wait()
	return g.err
}

// publishJob stores a job of task as Enqueue would, on queue "jobs", by
// hand: a task this binary may not have. It returns the JetStream it used.
func publishJob(t *testing.T, nc *nats.Conn, id, task string) jetstream.JetStream {
	t.Helper()
	js := jetStream(t, nc)
	msg := &nats.Msg{Subject: "offload.jobs.jobs.job." + id, Data: []byte{0x80}, Header: nats.Header{}}
	msg.Header.Set("Offload-Task", task)
	_, err := js.PublishMsg(testkit.Ctx(t), msg, jetstream.WithMsgID(id))
	require.NoError(t, err)
	return js
}
