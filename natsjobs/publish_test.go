package natsjobs_test

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/internal/testkit"
	"github.com/offloadgo/offload/natsjobs"
	"github.com/offloadgo/offload/pool"
)

// While no server answers for the work stream (as while its replicas
// elect a leader), Enqueue tries again with the same id until one
// does, and the job is stored once; when its ctx ends first, its error
// says the store was not confirmed.
func TestEnqueueRidesOutAStreamWithoutLeader(t *testing.T) {
	t.Parallel()
	s, admin := startJetStream(t)
	o := natsjobs.Options{Name: "jobs"}
	q := open(t, admin, o)
	ctx := testkit.Ctx(t)
	js, err := jetstream.New(admin)
	require.NoError(t, err)
	require.NoError(t, js.DeleteStream(ctx, "OFFLOAD_JOBS_jobs")) // no one answers its subjects

	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	_, err = natsjobs.Enqueue(short, q, double, Num{1})
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.ErrorContains(t, err, "the server did not confirm it")

	nc, err := s.Connect()
	require.NoError(t, err)
	defer nc.Close()
	eq := open(t, nc, o)
	require.NoError(t, js.DeleteStream(ctx, "OFFLOAD_JOBS_jobs"))
	sent := nc.Stats().OutMsgs
	type enqueued struct {
		id  natsjobs.ID
		err error
	}
	done := make(chan enqueued, 1)
	go func() {
		id, err := natsjobs.Enqueue(ctx, eq, double, Num{21})
		done <- enqueued{id, err}
	}()
	// More tries than nats.go makes on its own (three) before the
	// stream is back.
	require.Eventually(t, func() bool { return nc.Stats().OutMsgs >= sent+5 }, 20*time.Second, time.Millisecond)
	open(t, admin, o) // the stream is back
	e := <-done
	require.NoError(t, e.err)
	assert.EqualValues(t, 1, queuedJobs(t, admin), "stored once")
	serve(t, q, newPool(t, pool.Options{Workers: 1}), natsjobs.ServeOptions{})
	out, err := natsjobs.Wait(ctx, q, double, e.id)
	require.NoError(t, err)
	assert.Equal(t, 42, out)
}
