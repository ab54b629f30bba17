package natsjobs

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nuid"

	"github.com/offloadgo/offload/internal/shmbuf"
	"github.com/offloadgo/offload/pool"
)

// Enqueue stores a job that runs task on in, and returns its id once the
// server has stored it (one publish, acknowledged). It blocks on the
// server for as long as ctx allows. An input that can't be encoded fails
// and stores nothing, as does one holding a *transfer.Buffer (a job's
// input is stored; a Buffer's memory lives in this process). Past the
// queue's MaxJobs it fails at once with an error matching
// pool.ErrQueueFull. A user the server doesn't let publish the job is
// refused within a few seconds (one try), with an error matching
// nats.ErrPermissionViolation. With Key(k), a job already enqueued
// with k (within Retention) makes Enqueue return its id and store
// nothing. With Delay or At the job is Scheduled until due, and
// doesn't count against MaxJobs until then (see At); a negative Delay
// fails and stores nothing.
//
// The input is stored as msgpack with struct fields by name, so that a
// queued job still decodes into an In that has gained or lost a field.
func Enqueue[In, Out any](ctx context.Context, q *Queue, task pool.Task[In, Out], in In, opts ...EnqueueOption) (ID, error) {
	name := task.Name()
	if name == "" {
		return "", fmt.Errorf("natsjobs: Enqueue of the zero Task: %w", pool.ErrUnknownTask)
	}
	var o enqueueOptions
	for _, opt := range opts {
		opt(&o)
	}
	if o.maxAttempts < 0 || o.timeout < 0 {
		return "", fmt.Errorf("natsjobs: Enqueue of task %q: negative MaxAttempts or Timeout", name)
	}
	due, err := o.due(time.Now())
	if err != nil {
		return "", fmt.Errorf("natsjobs: Enqueue of task %q: %w", name, err)
	}
	body, err := encodeByName(in)
	if errors.Is(err, shmbuf.ErrNoPeer) {
		return "", fmt.Errorf("natsjobs: input of task %q holds a *transfer.Buffer, which moves memory of this process and can't be stored: use []byte: %w", name, err)
	}
	if err != nil {
		return "", fmt.Errorf("natsjobs: encode input of task %q: %w", name, err)
	}
	id := ID(nuid.Next())
	if o.key != "" {
		first, taken, err := q.claimKey(ctx, o.key, id)
		if err != nil || taken {
			return first, err
		}
	}
	msg := &nats.Msg{Subject: q.subject + string(id), Data: body, Header: nats.Header{}}
	msg.Header.Set(headerTask, name)
	if o.maxAttempts > 0 {
		msg.Header.Set(headerMaxAttempts, strconv.Itoa(o.maxAttempts))
	}
	if o.timeout > 0 {
		msg.Header.Set(headerTimeout, strconv.FormatInt(int64(o.timeout), 10))
	}
	if !due.IsZero() {
		q.schedule(msg, id, due)
	}
	endSpan, err := q.traceEnqueue(ctx, name, id, msg)
	if err == nil {
		err = q.publishJob(ctx, msg, id)
		endSpan(err)
	}
	if err != nil {
		if o.key != "" {
			// The key must not name a job that was never stored. Best
			// effort: a key left behind names an id Status doesn't know.
			_ = q.keys.Delete(context.WithoutCancel(ctx), keyOf(o.key))
		}
		if full(err) {
			return "", fmt.Errorf("natsjobs: queue %q holds MaxJobs jobs or MaxBytes bytes: %w", q.o.Name, pool.ErrQueueFull)
		}
		return "", fmt.Errorf("natsjobs: enqueue task %q: %w", name, err)
	}
	q.report(q.logger(), JobEvent{Kind: JobEnqueued, ID: id, Task: name})
	return id, nil
}

// keyOf is a Key as a bucket key, which allows few characters.
func keyOf(key string) string {
	return "k" + base64.RawURLEncoding.EncodeToString([]byte(key))
}

// full reports whether a publish failed because the work stream holds
// MaxJobs messages (or its bytes' limit).
func full(err error) bool {
	var api *jetstream.APIError
	if !errors.As(err, &api) {
		return false
	}
	return strings.Contains(api.Description, "maximum messages exceeded") ||
		strings.Contains(api.Description, "maximum bytes exceeded")
}
