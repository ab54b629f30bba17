package natsjobs

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

const (
	// publishTry bounds one try of a job's publish: a try whose request
	// reached a stream leader that then died is never answered.
	publishTry = 3 * time.Second
	// publishFor bounds the tries, well inside the work stream's
	// 2-minute dedup window: every try of one job carries its id as
	// Nats-Msg-Id, so the stream stores it once however many tries
	// reached it.
	publishFor = time.Minute
)

// errUnconfirmed is the end of a publish that stopped trying before the
// server said whether it stored the job.
var errUnconfirmed = errors.New("the server did not confirm it")

// publishJob stores job id's message, trying again, with the same id,
// while the server can't answer (a stream electing its leader, a
// connection reconnecting): until it is stored, refused, or ctx (or
// publishFor) ends. A user that may not publish there is refused after
// one try (publishTry), with an error matching
// nats.ErrPermissionViolation: the server says so only asynchronously,
// so a try that timed out looks for it, costing nothing when publishes
// succeed. An error wrapping errUnconfirmed and ctx's error leaves it
// unknown whether the job was stored; any other error means it was not.
func (q *Queue) publishJob(ctx context.Context, msg *nats.Msg, id ID) error {
	ctx, cancel := context.WithTimeout(ctx, publishFor)
	defer cancel()
	nc := q.js.Conn()
	before := nc.LastError()
	_, err := through(ctx, publishTry, func(ctx context.Context) (*jetstream.PubAck, error) {
		ack, err := q.js.PublishMsg(ctx, msg, jetstream.WithMsgID(string(id)))
		return ack, refusedOr(nc, before, err, publishOn(msg.Subject))
	})
	if err != nil && transient(err) {
		return fmt.Errorf("job %s: %w (%w): %w", id, errUnconfirmed, err, context.Cause(ctx))
	}
	return err
}

// transient reports whether a JetStream request failed because the
// server could not answer now, rather than because it refused: no
// responder (no stream leader), no answer in time, the connection away,
// or JetStream unavailable for the moment (but not a full stream, nor a
// server or account without JetStream at all).
func transient(err error) bool {
	var api *jetstream.APIError
	if errors.As(err, &api) {
		// A full stream answers 503 too: a refusal, not an absence.
		return api.Code == 503 && !full(err) && api.ErrorCode != jetstream.JSErrCodeJetStreamNotEnabled &&
			api.ErrorCode != jetstream.JSErrCodeJetStreamNotEnabledForAccount
	}
	// The status bucket's watch is made through nats.go's older
	// JetStream API, whose errors are its own type.
	var legacy *nats.APIError
	if errors.As(err, &legacy) {
		return legacy.Code == 503 && legacy.ErrorCode != nats.JSErrCodeJetStreamNotEnabled &&
			legacy.ErrorCode != nats.JSErrCodeJetStreamNotEnabledForAccount
	}
	return errors.Is(err, jetstream.ErrNoStreamResponse) || errors.Is(err, nats.ErrNoResponders) ||
		errors.Is(err, nats.ErrTimeout) || errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, nats.ErrReconnectBufExceeded)
}

// through calls try, with a ctx of per, until it succeeds, fails for
// good (not transient), or ctx ends. Each try must be safe to repeat.
func through[T any](ctx context.Context, per time.Duration, try func(context.Context) (T, error)) (T, error) {
	for {
		tctx, cancel := context.WithTimeout(ctx, per)
		v, err := try(tctx)
		cancel()
		if err == nil || !transient(err) || ctx.Err() != nil {
			return v, err
		}
		sleep(ctx, troubleWait)
	}
}

// putRecordThrough writes id's record over rev as putRecord does,
// trying again while the server can't answer (the bucket electing its
// leader), for as long as ctx allows: an outcome lost to a failover
// would have the job run again. A try that was stored though its answer
// was lost makes the next fail, as the record is no longer at rev: the
// caller reads the record then, and finds its own write. A user that
// may not write it is refused after one try, as in publishJob.
func (q *Queue) putRecordThrough(ctx context.Context, id ID, r record, rev uint64) (uint64, error) {
	nc, before := q.js.Conn(), q.js.Conn().LastError()
	return through(ctx, publishTry, func(ctx context.Context) (uint64, error) {
		newRev, err := q.putRecord(ctx, id, r, rev)
		return newRev, refusedOr(nc, before, err, publishOn(q.recordSubject(id)))
	})
}

// recordSubject is where id's record is written.
func (q *Queue) recordSubject(id ID) string { return "$KV." + q.statuses.Bucket() + "." + string(id) }
