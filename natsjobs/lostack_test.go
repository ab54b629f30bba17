package natsjobs_test

import (
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/offloadgo/offload/internal/testkit"
	"github.com/offloadgo/offload/natsjobs"
	"github.com/offloadgo/offload/pool"
)

// A job whose outcome was written but whose ack never reached the server
// (a worker acks without waiting for the server's word) is delivered
// again: the delivery finds the final record and acks the job, without
// running it and without touching the record.
func TestLostAckFinishesWithoutRunning(t *testing.T) {
	t.Parallel()
	q, nc := startQueue(t, natsjobs.Options{})
	ctx := testkit.Ctx(t)
	k := key(t)
	id, err := natsjobs.Enqueue(ctx, q, sleepy, Keyed{Key: k})
	require.NoError(t, err)
	serve(t, q, newPool(t, pool.Options{Workers: 1}), natsjobs.ServeOptions{})
	_, err = natsjobs.Wait(ctx, q, sleepy, id)
	require.NoError(t, err)
	before, err := q.Status(ctx, id)
	require.NoError(t, err)

	// The job's message, back in the work stream as if its ack was lost
	// (without its message id, which the server would take as a dup).
	body, err := msgpack.Marshal(map[string]any{"Key": k})
	require.NoError(t, err)
	js := jetStream(t, nc)
	msg := &nats.Msg{Subject: "offload.jobs.jobs.job." + string(id), Data: body, Header: nats.Header{}}
	msg.Header.Set("Offload-Task", sleepy.Name())
	_, err = js.PublishMsg(ctx, msg)
	require.NoError(t, err)

	require.Eventually(t, func() bool { return queuedJobs(t, nc) == 0 }, 20*time.Second, 5*time.Millisecond, "acked")
	assert.Equal(t, 1, runCount(k), "not run again")
	after, err := q.Status(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, before, after, "its record as the run left it")
}
