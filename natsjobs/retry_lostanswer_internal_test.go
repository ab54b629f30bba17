package natsjobs

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/natsremote/embedded"
)

// losesFirstUpdate is a status bucket whose first Update is stored but
// unanswered, as one whose answer a failover lost.
type losesFirstUpdate struct {
	jetstream.KeyValue
	updates atomic.Int32
}

func (kv *losesFirstUpdate) Update(ctx context.Context, key string, value []byte, rev uint64) (uint64, error) {
	newRev, err := kv.KeyValue.Update(ctx, key, value, rev)
	if kv.updates.Add(1) == 1 && err == nil {
		return 0, nats.ErrTimeout
	}
	return newRev, err
}

// losesFirstPublish is a JetStream whose first publish is stored but
// unanswered.
type losesFirstPublish struct {
	jetstream.JetStream
	publishes atomic.Int32
}

func (js *losesFirstPublish) PublishMsg(ctx context.Context, msg *nats.Msg, opts ...jetstream.PublishOpt) (*jetstream.PubAck, error) {
	ack, err := js.JetStream.PublishMsg(ctx, msg, opts...)
	if js.publishes.Add(1) == 1 && err == nil {
		return nil, nats.ErrTimeout
	}
	return ack, err
}

// A Retry whose record write and republish were each stored but their
// answers lost finds its own write, and queues the job once.
func TestRetryWhoseAnswersWereLostQueuesTheJobOnce(t *testing.T) {
	s, err := embedded.Start(embedded.Options{StoreDir: t.TempDir()})
	require.NoError(t, err)
	t.Cleanup(s.Shutdown)
	nc, err := s.Connect()
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	q, err := Open(ctx, nc, Options{Name: "lostanswers"})
	require.NoError(t, err)
	t.Cleanup(func() { _ = q.Close() })

	// A dead job, as a worker leaves it: its copy aside, its record Dead.
	const id = ID("deadjob")
	dead := &nats.Msg{Subject: q.deadSubject(id), Data: []byte("input"), Header: nats.Header{headerTask: []string{"t"}}}
	_, err = q.js.PublishMsg(ctx, dead)
	require.NoError(t, err)
	_, err = q.putRecord(ctx, id, record{Task: "t", State: Dead, Attempt: 1, Enqueued: time.Now()}, 0)
	require.NoError(t, err)

	statuses := &losesFirstUpdate{KeyValue: q.statuses}
	js := &losesFirstPublish{JetStream: q.js}
	q.statuses, q.js = statuses, js
	require.NoError(t, q.Retry(ctx, id))
	assert.EqualValues(t, 2, statuses.updates.Load(), "the record write tried again")
	assert.EqualValues(t, 2, js.publishes.Load(), "the republish tried again")

	r, _, err := q.record(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, Queued, r.State)
	info, err := q.work.Info(ctx)
	require.NoError(t, err)
	assert.EqualValues(t, 1, info.State.Msgs, "the job queued once")
}
