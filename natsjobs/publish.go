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
// publishFor) ends. An error wrapping errUnconfirmed and ctx's error
// leaves it unknown whether the job was stored; any other error means
// it was not.
func (q *Queue) publishJob(ctx context.Context, msg *nats.Msg, id ID) error {
	ctx, cancel := context.WithTimeout(ctx, publishFor)
	defer cancel()
	for {
		try, cancelTry := context.WithTimeout(ctx, publishTry)
		_, err := q.js.PublishMsg(try, msg, jetstream.WithMsgID(string(id)))
		cancelTry()
		switch {
		case err == nil || !transient(err):
			return err
		case ctx.Err() != nil:
			return fmt.Errorf("job %s: %w (%w): %w", id, errUnconfirmed, err, context.Cause(ctx))
		}
		sleep(ctx, troubleWait)
	}
}

// transient reports whether a JetStream request failed because the
// server could not answer now, rather than because it refused: no
// responder (no stream leader), no answer in time, the connection away,
// or JetStream unavailable for the moment.
func transient(err error) bool {
	var api *jetstream.APIError
	if errors.As(err, &api) {
		return api.Code == 503
	}
	return errors.Is(err, jetstream.ErrNoStreamResponse) || errors.Is(err, nats.ErrNoResponders) ||
		errors.Is(err, nats.ErrTimeout) || errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, nats.ErrReconnectBufExceeded)
}
