package natsjobs

import (
	"context"
	"fmt"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Retry's steps, each tried again while the server can't answer (a
// leader election, a reconnect). A try whose answer was lost may have
// done its work: each step is safe to repeat, or finds its own work.

// deadCopy returns dead job id's copy in the dead stream, the job as it
// was enqueued.
func (q *Queue) deadCopy(ctx context.Context, id ID) (*jetstream.RawStreamMsg, error) {
	nc, before := q.js.Conn(), q.js.Conn().LastError()
	return through(ctx, publishTry, func(ctx context.Context) (*jetstream.RawStreamMsg, error) {
		m, err := q.dead.GetLastMsgForSubject(ctx, q.deadSubject(id))
		return m, refusedOr(nc, before, err, readsOf(deadStreamName(q.o.Name))...)
	})
}

// requeueRecord writes dead job id's record queued over deadRev, the
// revision at which it read Dead, and returns the new revision. A try
// whose answer was lost may have stored queued, so that the next finds
// the record no longer at deadRev: the record read Queued then is that
// write (or a concurrent Retry's of the same death, which asked for the
// same: only a Retry writes over a Dead record).
func (q *Queue) requeueRecord(ctx context.Context, id ID, queued record, deadRev uint64) (uint64, error) {
	rev, unanswered, err := q.putRecordOnce(ctx, id, queued, deadRev)
	if err == nil || transient(err) || !unanswered {
		return rev, err
	}
	r, rev, rerr := q.recordThrough(ctx, id)
	if rerr == nil && r.State == Queued && r.Attempt == 0 && r.Enqueued.Equal(queued.Enqueued) {
		return rev, nil
	}
	return 0, err
}

// republish stores dead job id's message again in the work stream,
// trying again as publishJob does. Every try of every Retry of one death
// of the job (its record Dead at deadRev) carries the same Nats-Msg-Id,
// so that the stream stores it once however many tries reached it. An
// error wrapping errUnconfirmed leaves it unknown whether it was stored.
func (q *Queue) republish(ctx context.Context, msg *nats.Msg, id ID, deadRev uint64) error {
	ctx, cancel := context.WithTimeout(ctx, publishFor)
	defer cancel()
	msgID := fmt.Sprintf("%s-retry-%d", id, deadRev)
	nc, before := q.js.Conn(), q.js.Conn().LastError()
	_, err := through(ctx, publishTry, func(ctx context.Context) (*jetstream.PubAck, error) {
		ack, err := q.js.PublishMsg(ctx, msg, jetstream.WithMsgID(msgID))
		return ack, refusedOr(nc, before, err, publishOn(msg.Subject))
	})
	if err != nil && transient(err) {
		return fmt.Errorf("%w (%w): %w", errUnconfirmed, err, context.Cause(ctx))
	}
	return err
}

// undoRequeue writes job id's record back to dead, as it was before a
// Retry whose republish failed wrote it Queued at rev; a job the server
// stored after all finds it Dead, and its worker drops it. It tries
// again for opTimeout at most, whatever ctx allows: a job left Queued
// with no message would never run, nor could it be retried.
func (q *Queue) undoRequeue(ctx context.Context, id ID, dead record, rev uint64) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), opTimeout)
	defer cancel()
	_, _ = q.putRecordThrough(ctx, id, dead, rev)
}

// isQueued reports whether the work stream holds job id (a job Retry
// finds no record of), trying again as recordThrough does.
func (q *Queue) isQueued(ctx context.Context, id ID) bool {
	_, err := through(ctx, publishTry, func(ctx context.Context) (*jetstream.RawStreamMsg, error) {
		return q.queued(ctx, id)
	})
	return err == nil
}

// dropDeadCopy removes a retried job's copy from the dead stream, in one
// try bounded by publishTry (see afterCancel): a copy left there is read
// by nobody, and replaced when the job is buried again.
func (q *Queue) dropDeadCopy(ctx context.Context, seq uint64) {
	ctx, cancel := context.WithTimeout(ctx, publishTry)
	defer cancel()
	_ = q.dead.DeleteMsg(ctx, seq)
}
