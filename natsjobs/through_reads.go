package natsjobs

import (
	"context"

	"github.com/nats-io/nats.go/jetstream"
)

// recordAt is a record and its revision, as through passes them on.
type recordAt struct {
	r   record
	rev uint64
}

// recordThrough reads id's record as record does, trying again while
// the server can't answer (the bucket electing its leader, the
// connection reconnecting), for as long as ctx allows.
func (q *Queue) recordThrough(ctx context.Context, id ID) (record, uint64, error) {
	at, err := through(ctx, publishTry, func(ctx context.Context) (recordAt, error) {
		r, rev, err := q.record(ctx, id)
		return recordAt{r, rev}, err
	})
	return at.r, at.rev, err
}

// waitingThrough finds id's waiting message as waiting does, trying
// again while the server can't answer, for as long as ctx allows.
func (q *Queue) waitingThrough(ctx context.Context, id ID) (*jetstream.RawStreamMsg, error) {
	return through(ctx, publishTry, func(ctx context.Context) (*jetstream.RawStreamMsg, error) {
		return q.waiting(ctx, id)
	})
}

// putRecordOnce writes id's record over rev as putRecordThrough does,
// and also reports whether a try before the last went unanswered: that
// try may have stored r, so that a later conflict is r itself.
func (q *Queue) putRecordOnce(ctx context.Context, id ID, r record, rev uint64) (newRev uint64, unanswered bool, err error) {
	tries := 0
	nc, before := q.js.Conn(), q.js.Conn().LastError()
	newRev, err = through(ctx, publishTry, func(ctx context.Context) (uint64, error) {
		tries++
		newRev, err := q.putRecord(ctx, id, r, rev)
		return newRev, refusedOr(nc, before, err, publishOn(q.recordSubject(id)))
	})
	return newRev, tries > 1, err
}
