package natsjobs_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/offloadgo/offload/internal/testkit"
	"github.com/offloadgo/offload/natsjobs"
	"github.com/offloadgo/offload/pool"
)

// queuedJobs is how many messages the work stream of queue "jobs" holds.
func queuedJobs(t *testing.T, nc *nats.Conn) uint64 {
	t.Helper()
	return storedMsgs(t, nc, "OFFLOAD_JOBS_jobs")
}

func TestRoundTrip(t *testing.T) {
	t.Parallel()
	q, nc := startQueue(t, natsjobs.Options{})
	ctx := testkit.Ctx(t)
	id, err := natsjobs.Enqueue(ctx, q, double, Num{21})
	require.NoError(t, err)
	st, err := q.Status(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, natsjobs.Queued, st.State, "queued, with no second write")
	assert.Equal(t, "natsjobs.double", st.Task)
	assert.False(t, st.Enqueued.IsZero())

	serve(t, q, newPool(t, pool.Options{Workers: 2}), natsjobs.ServeOptions{})
	out, err := natsjobs.Wait(ctx, q, double, id)
	require.NoError(t, err)
	assert.Equal(t, 42, out)
	st, err = q.Status(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, natsjobs.Succeeded, st.State)
	assert.Equal(t, 1, st.Attempt)
	assert.False(t, st.Finished.Before(st.Started))
	require.Eventually(t, func() bool { return queuedJobs(t, nc) == 0 }, 20*time.Second, 5*time.Millisecond,
		"acked (after its record was written), so gone from the work stream")

	_, err = q.Status(ctx, "nosuchjob")
	assert.ErrorIs(t, err, natsjobs.ErrNotFound)
	_, err = natsjobs.Wait(ctx, q, double, "nosuchjob")
	assert.ErrorIs(t, err, natsjobs.ErrNotFound)
	_, err = q.Status(ctx, "no.such/job")
	assert.ErrorIs(t, err, natsjobs.ErrNotFound)
}

func TestKeyIsIdempotent(t *testing.T) {
	t.Parallel()
	q, nc := startQueue(t, natsjobs.Options{})
	ctx := testkit.Ctx(t)
	first, err := natsjobs.Enqueue(ctx, q, double, Num{1}, natsjobs.Key("order 42/é"))
	require.NoError(t, err)
	again, err := natsjobs.Enqueue(ctx, q, double, Num{2}, natsjobs.Key("order 42/é"))
	require.NoError(t, err)
	assert.Equal(t, first, again)
	other, err := natsjobs.Enqueue(ctx, q, double, Num{3}, natsjobs.Key("order 43"))
	require.NoError(t, err)
	assert.NotEqual(t, first, other)
	assert.EqualValues(t, 2, queuedJobs(t, nc), "the same key stores no second job")
}

func TestMaxJobsFailsWithQueueFull(t *testing.T) {
	t.Parallel()
	q, nc := startQueue(t, natsjobs.Options{MaxJobs: 3})
	ctx := testkit.Ctx(t)
	for i := range 3 {
		_, err := natsjobs.Enqueue(ctx, q, double, Num{i})
		require.NoError(t, err)
	}
	_, err := natsjobs.Enqueue(ctx, q, double, Num{4})
	require.ErrorIs(t, err, pool.ErrQueueFull)
	assert.ErrorContains(t, err, "natsjobs:")
	_, err = natsjobs.Enqueue(ctx, q, double, Num{5}, natsjobs.Key("k"))
	require.ErrorIs(t, err, pool.ErrQueueFull)
	assert.EqualValues(t, 3, queuedJobs(t, nc))

	// A refused key names no job: the key works once there is room.
	serve(t, q, newPool(t, pool.Options{Workers: 1}), natsjobs.ServeOptions{})
	require.Eventually(t, func() bool { return queuedJobs(t, nc) == 0 }, 20*time.Second, 10*time.Millisecond)
	requireDoubled(ctx, t, q, 5, natsjobs.Key("k"))
}

// MaxBytes bounds the work stream's bytes as MaxJobs bounds its jobs.
func TestMaxBytesFailsWithQueueFull(t *testing.T) {
	t.Parallel()
	q, nc := startQueue(t, natsjobs.Options{MaxBytes: 8 << 10})
	ctx := testkit.Ctx(t)
	big := Keyed{Key: strings.Repeat("k", 2<<10)}
	var stored int
	var err error
	for range 8 {
		if _, err = natsjobs.Enqueue(ctx, q, always, big); err != nil {
			break
		}
		stored++
	}
	require.ErrorIs(t, err, pool.ErrQueueFull)
	assert.ErrorContains(t, err, "MaxBytes")
	assert.Positive(t, stored)
	assert.EqualValues(t, stored, queuedJobs(t, nc), "the refused job stored nothing")
}

func TestInputThatWontEncodeStoresNothing(t *testing.T) {
	t.Parallel()
	q, nc := startQueue(t, natsjobs.Options{})
	_, err := natsjobs.Enqueue(testkit.Ctx(t), q, withChan, struct{ C chan int }{make(chan int)})
	require.ErrorContains(t, err, `natsjobs: encode input of task "natsjobs.withchan"`)
	assert.Zero(t, queuedJobs(t, nc))
	_, err = natsjobs.Enqueue(testkit.Ctx(t), q, pool.Task[Num, int]{}, Num{})
	assert.ErrorIs(t, err, pool.ErrUnknownTask)
}

// A job queued by a build whose In had fewer fields, in another order,
// runs on a build whose In has gained one: fields go by name.
func TestQueuedInputDecodesIntoAGrownStruct(t *testing.T) {
	t.Parallel()
	q, nc := startQueue(t, natsjobs.Options{})
	ctx := testkit.Ctx(t)
	body, err := msgpack.Marshal(First{Name: "old"})
	require.NoError(t, err)
	js := jetStream(t, nc)
	msg := &nats.Msg{Subject: "offload.jobs.jobs.job.oldbuild1", Data: body, Header: nats.Header{}}
	msg.Header.Set("Offload-Task", "natsjobs.second")
	_, err = js.PublishMsg(ctx, msg, jetstream.WithMsgID("oldbuild1"))
	require.NoError(t, err)

	serve(t, q, newPool(t, pool.Options{Workers: 1}), natsjobs.ServeOptions{})
	out, err := natsjobs.Wait(ctx, q, second, "oldbuild1")
	require.NoError(t, err)
	assert.Equal(t, "old/", out)
}

// storedMsgs is how many messages stream holds.
func storedMsgs(t *testing.T, nc *nats.Conn, stream string) uint64 {
	t.Helper()
	s, err := jetStream(t, nc).Stream(testkit.Ctx(t), stream)
	require.NoError(t, err)
	info, err := s.Info(testkit.Ctx(t))
	require.NoError(t, err)
	return info.State.Msgs
}

// keyValue is nc's bucket.
func keyValue(t *testing.T, nc *nats.Conn, bucket string) jetstream.KeyValue {
	t.Helper()
	kv, err := jetStream(t, nc).KeyValue(testkit.Ctx(t), bucket)
	require.NoError(t, err)
	return kv
}

// jetStream is nc's JetStream.
func jetStream(t *testing.T, nc *nats.Conn) jetstream.JetStream {
	t.Helper()
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	return js
}

// requireDoubled enqueues a double of n, with opts, and requires that it
// answers 2n. It returns the job.
func requireDoubled(ctx context.Context, t *testing.T, q *natsjobs.Queue, n int, opts ...natsjobs.EnqueueOption) natsjobs.ID {
	t.Helper()
	id, err := natsjobs.Enqueue(ctx, q, double, Num{n}, opts...)
	require.NoError(t, err)
	out, err := natsjobs.Wait(ctx, q, double, id)
	require.NoError(t, err)
	assert.Equal(t, 2*n, out)
	return id
}
