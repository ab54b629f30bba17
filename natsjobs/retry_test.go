package natsjobs_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/internal/testkit"
	"github.com/offloadgo/offload/natsjobs"
	"github.com/offloadgo/offload/pool"
)

func TestRetryThenSuccess(t *testing.T) {
	t.Parallel()
	q, _ := startQueue(t, natsjobs.Options{})
	serve(t, q, newPool(t, pool.Options{Workers: 2}), natsjobs.ServeOptions{})
	ctx := testkit.Ctx(t)
	id, err := natsjobs.Enqueue(ctx, q, flaky, Keyed{Key: key(t)})
	require.NoError(t, err)
	out, err := natsjobs.Wait(ctx, q, flaky, id)
	require.NoError(t, err)
	assert.Equal(t, "fine", out)
	st, err := q.Status(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, natsjobs.Succeeded, st.State)
	assert.Equal(t, 2, st.Attempt)
	assert.Equal(t, 2, runCount(key(t)))
}

// Failures are retried until the job's attempts are spent, then the job
// is dead with the last error's text, out of the work stream, listed and
// run again by Retry.
func TestAttemptsSpentThenDead(t *testing.T) {
	t.Parallel()
	q, nc := startQueue(t, natsjobs.Options{})
	serve(t, q, newPool(t, pool.Options{Workers: 2}), natsjobs.ServeOptions{})
	ctx := testkit.Ctx(t)
	id, err := natsjobs.Enqueue(ctx, q, always, Keyed{Key: key(t)}, natsjobs.MaxAttempts(3))
	require.NoError(t, err)
	assert.EqualError(t, waitDead(ctx, t, q, always, id), "natsjobs: job is dead: still broken")
	assert.Equal(t, 3, runCount(key(t)))
	st, err := q.Status(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, natsjobs.Dead, st.State)
	assert.Equal(t, 3, st.Attempt)
	dead, err := q.List(ctx, natsjobs.Dead, 10)
	require.NoError(t, err)
	require.Len(t, dead, 1, "listed as soon as it reads dead")
	assert.Equal(t, id, dead[0].ID)
	require.Eventually(t, func() bool { return queuedJobs(t, nc) == 0 }, 20*time.Second, 5*time.Millisecond, "moved aside, not counted")

	require.NoError(t, q.Retry(ctx, id))
	waitDead(ctx, t, q, always, id)
	assert.Equal(t, 6, runCount(key(t)), "three attempts again")
	dead, err = q.List(ctx, natsjobs.Dead, 10)
	require.NoError(t, err)
	assert.Len(t, dead, 1, "one copy of the job, dead again, listed as soon as it reads dead")
	assert.ErrorIs(t, q.Retry(ctx, "nosuchjob"), natsjobs.ErrNotFound)
}

func TestRetryOfALiveJobIsRefused(t *testing.T) {
	t.Parallel()
	q, _ := startQueue(t, natsjobs.Options{})
	serve(t, q, newPool(t, pool.Options{Workers: 1}), natsjobs.ServeOptions{})
	ctx := testkit.Ctx(t)
	id, err := natsjobs.Enqueue(ctx, q, double, Num{1})
	require.NoError(t, err)
	_, err = natsjobs.Wait(ctx, q, double, id)
	require.NoError(t, err)
	err = q.Retry(ctx, id)
	require.ErrorIs(t, err, natsjobs.ErrEnded)
	assert.ErrorContains(t, err, "succeeded, not dead")
}

// A Permanent error and a panic end the job dead at once, with their
// text; an attempt's Timeout ends its run.
func TestDeadAtOnce(t *testing.T) {
	t.Parallel()
	q, _ := startQueue(t, natsjobs.Options{})
	serve(t, q, newPool(t, pool.Options{Workers: 2}), natsjobs.ServeOptions{})
	cases := []struct {
		name string
		task pool.Task[Keyed, string]
		in   Keyed
		opts []natsjobs.EnqueueOption
		text []string
		runs int
	}{
		{"permanent", permanent, Keyed{}, nil, []string{"natsjobs: job is dead: bad input, not worth retrying"}, 1},
		{"panic", panicky, Keyed{}, nil, []string{`task "natsjobs.panicky" panicked: boom in the task`, "goroutine"}, 1},
		{"timeout", sleepy, Keyed{Sleep: time.Minute}, []natsjobs.EnqueueOption{natsjobs.Timeout(50 * time.Millisecond), natsjobs.MaxAttempts(2)},
			[]string{"natsjobs: attempt 2 timed out after 50ms"}, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ctx := testkit.Ctx(t)
			c.in.Key = key(t)
			id, err := natsjobs.Enqueue(ctx, q, c.task, c.in, c.opts...)
			require.NoError(t, err)
			err = waitDead(ctx, t, q, c.task, id)
			for _, text := range c.text {
				assert.ErrorContains(t, err, text)
			}
			assert.Equal(t, c.runs, runCount(key(t)))
			st, err := q.Status(ctx, id)
			require.NoError(t, err)
			assert.Equal(t, c.runs, st.Attempt)
		})
	}
}

// Ends that another attempt would meet again are dead at once: an
// output over a Subprocess pool's MaxPayload, a runtime.Goexit.
func TestHopelessEndsAreDeadAtOnce(t *testing.T) {
	t.Parallel()
	q, nc := startQueue(t, natsjobs.Options{})
	ctx := testkit.Ctx(t)
	serve(t, q, newPool(t, pool.Options{Workers: 1, Isolation: pool.Subprocess,
		Subprocess: pool.SubprocessOptions{MaxPayload: 64 << 10}}), natsjobs.ServeOptions{})
	id, err := natsjobs.Enqueue(ctx, q, big, 1<<20)
	require.NoError(t, err)
	assert.ErrorContains(t, waitDead(ctx, t, q, big, id), "pool: payload too large")
	st, err := q.Status(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, 1, st.Attempt)

	q2 := open(t, nc, natsjobs.Options{Name: "inprocess"})
	serve(t, q2, newPool(t, pool.Options{Workers: 1}), natsjobs.ServeOptions{})
	id, err = natsjobs.Enqueue(ctx, q2, goexit, Keyed{Key: key(t)})
	require.NoError(t, err)
	assert.ErrorContains(t, waitDead(ctx, t, q2, goexit, id), "runtime.Goexit")
	assert.Equal(t, 1, runCount(key(t)))
}

func TestOptionsAreChecked(t *testing.T) {
	t.Parallel()
	_, nc := startJetStream(t)
	for _, o := range []natsjobs.Options{
		{},
		{Name: "a.b"},
		{Name: "x", MaxJobs: -1},
		{Name: "x", MaxBytes: -1},
		{Name: "x", Lease: time.Millisecond},
	} {
		_, err := natsjobs.Open(testkit.Ctx(t), nc, o)
		assert.ErrorContains(t, err, "natsjobs: ", "%+v", o)
	}
}

// waitDead waits for job id of task, requires that it ended dead, and
// returns Wait's error.
func waitDead[In, Out any](ctx context.Context, t *testing.T, q *natsjobs.Queue, task pool.Task[In, Out], id natsjobs.ID) error {
	t.Helper()
	_, err := natsjobs.Wait(ctx, q, task, id)
	require.ErrorIs(t, err, natsjobs.ErrDead)
	return err
}
