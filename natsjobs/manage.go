package natsjobs

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/offloadgo/offload/pool"
)

// Cancel cancels job id: a scheduled, queued or retrying job never runs
// again; a running one has its ctx cancelled (with ErrCanceled as its
// cause; a Subprocess pool kills it after TerminateGrace). Either way the job
// ends Canceled. A job that has ended already is left as it was, and
// Cancel returns an error matching ErrEnded that says how it ended. It
// tries again while the server can't answer (a leader election, a
// reconnect), for as long as ctx allows; a user the server doesn't let
// cancel is refused after one try (a few seconds), with an error
// matching nats.ErrPermissionViolation.
func (q *Queue) Cancel(ctx context.Context, id ID) error {
	if !validID(id) {
		return ErrNotFound
	}
	// A write whose answer was lost may have stored Canceled: finding
	// the job Canceled then is finding that write (or a concurrent
	// Cancel's, which asked for the same).
	mayHaveWritten := false
	for range claimTries {
		r, rev, err := q.recordThrough(ctx, id)
		if errors.Is(err, ErrNotFound) {
			m, err := q.waitingThrough(ctx, id)
			if err != nil {
				return err
			}
			r = record{Task: m.Header.Get(headerTask), Enqueued: m.Time}
		} else if err != nil {
			return err
		}
		if r.State.final() && !(mayHaveWritten && r.State == Canceled) {
			return fmt.Errorf("%w: job %s %s", ErrEnded, id, r.State)
		}
		if r.State != Canceled {
			r.State, r.Finished = Canceled, time.Now()
			_, unanswered, err := q.putRecordOnce(ctx, id, r, rev)
			mayHaveWritten = mayHaveWritten || unanswered
			if err != nil && (transient(err) || errors.Is(err, nats.ErrPermissionViolation)) {
				return fmt.Errorf("natsjobs: cancel job %s: %w", id, err)
			}
			if err != nil {
				continue // changed under us: read it again
			}
		}
		q.report(q.logger(), JobEvent{Kind: JobCanceled, ID: id, Task: r.Task, Attempt: r.Attempt})
		q.afterCancel(ctx, id)
		return nil
	}
	return fmt.Errorf("natsjobs: cancel job %s: its status kept changing", id)
}

// Retry runs dead job id again, from its first attempt, with the input
// it was enqueued with; its id stays. A job that is not dead is left as
// it was, and Retry returns an error matching ErrEnded (or ErrNotFound).
// It tries again while the server can't answer (a leader election, a
// reconnect), for as long as ctx allows, and queues the job once however
// many of its tries reached the server; a user the server doesn't let
// retry is refused after one try, with an error matching
// nats.ErrPermissionViolation.
func (q *Queue) Retry(ctx context.Context, id ID) error {
	if !validID(id) {
		return ErrNotFound
	}
	r, deadRev, err := q.recordThrough(ctx, id)
	if errors.Is(err, ErrNotFound) && q.isQueued(ctx, id) {
		return fmt.Errorf("%w: job %s is queued, not dead", ErrEnded, id)
	}
	if err != nil {
		return err
	}
	if r.State != Dead {
		return fmt.Errorf("%w: job %s is %s, not dead", ErrEnded, id, r.State)
	}
	dead, err := q.deadCopy(ctx, id)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return fmt.Errorf("natsjobs: dead job %s has no copy to run again (not yet moved aside, or past Retention): %w", id, ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("natsjobs: retry job %s: %w", id, err)
	}
	// The record first: a worker that takes the job finds it Queued.
	queued := record{Task: r.Task, State: Queued, Enqueued: r.Enqueued}
	rev, err := q.requeueRecord(ctx, id, queued, deadRev)
	if err != nil && (transient(err) || errors.Is(err, nats.ErrPermissionViolation)) {
		return fmt.Errorf("natsjobs: retry job %s: %w", id, err)
	}
	if err != nil {
		return fmt.Errorf("natsjobs: retry job %s: its status changed: %w", id, err)
	}
	msg := &nats.Msg{Subject: q.subject + string(id), Data: dead.Data, Header: dead.Header}
	msg.Header.Del(jetstream.MsgIDHeader)
	if err := q.republish(ctx, msg, id, deadRev); err != nil {
		q.undoRequeue(ctx, id, r, rev) // dead again, as it was
		if full(err) {
			return fmt.Errorf("natsjobs: retry job %s: queue %q holds MaxJobs jobs: %w", id, q.o.Name, pool.ErrQueueFull)
		}
		return fmt.Errorf("natsjobs: retry job %s: %w", id, err)
	}
	q.dropDeadCopy(ctx, dead.Sequence)
	q.report(q.logger(), JobEvent{Kind: JobEnqueued, ID: id, Task: r.Task})
	return nil
}
