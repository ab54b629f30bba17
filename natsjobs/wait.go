package natsjobs

import (
	"context"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/offloadgo/offload/internal/codec"
	"github.com/offloadgo/offload/pool"
)

// Wait blocks until job id ends, or ctx does, and returns its output. A
// dead job's error matches ErrDead and ends with the last attempt's
// error; a canceled job's matches ErrCanceled; an unknown one's
// ErrNotFound; a Wait on a closed Queue returns ErrQueueClosed. Wait
// doesn't poll: it hears of the job's changes through the queue's one
// watch on its status bucket. It goes on across the connection's
// reconnects, and reads again what the server could not answer (a
// bucket electing its leader).
func Wait[In, Out any](ctx context.Context, q *Queue, task pool.Task[In, Out], id ID) (Out, error) {
	var zero Out
	if !validID(id) {
		return zero, ErrNotFound
	}
	sub, err := q.watch.subscribe(ctx, id)
	if err != nil {
		return zero, err
	}
	defer q.watch.unsubscribe(sub)
	// A read that catches up with the watch (lookupSince) does so
	// within its try.
	try := publishTry
	if sub.seen > 0 {
		try += catchUpFor
	}
	r, queued, err := q.watch.readAcross(ctx, try, func(ctx context.Context) (record, *jetstream.RawStreamMsg, error) {
		return q.lookupSince(ctx, id, sub.seen)
	})
	for {
		switch {
		case err != nil:
			return zero, err
		case queued != nil:
			// No record yet: the first is written when a worker takes it.
		case r.Task != task.Name():
			return zero, fmt.Errorf("natsjobs: job %s is of task %q, not %q", id, r.Task, task.Name())
		case r.State == Succeeded:
			var out Out
			if err := codec.Unmarshal(r.Out, &out); err != nil {
				return zero, fmt.Errorf("natsjobs: decode output of job %s: %w", id, err)
			}
			return out, nil
		case r.State == Dead:
			return zero, fmt.Errorf("%w: %s", ErrDead, r.Err)
		case r.State == Canceled:
			return zero, ErrCanceled
		}
		select {
		case e := <-sub.changed:
			if e == nil { // the watch was lost and is back
				r, queued, err = q.watch.readAcross(ctx, publishTry, func(ctx context.Context) (record, *jetstream.RawStreamMsg, error) {
					return q.lookup(ctx, id)
				})
				continue
			}
			r, err = decodeRecord(e.Value())
			queued = nil
		case <-sub.done:
			return zero, ErrQueueClosed
		case <-ctx.Done():
			return zero, ctx.Err()
		}
	}
}
