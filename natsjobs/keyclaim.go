package natsjobs

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// keyClaimed bounds how long after its claim a key may name a job not
// yet stored: its Enqueue publishes for at most publishFor, a try at a
// time, and then stores the job or deletes the key.
const keyClaimed = publishFor + publishTry

// claimKey records key → id, or returns the id a job enqueued with key
// already has (taken). A key is claimed before its job is published, so
// a key claimed a moment ago may name a job not yet stored, or one
// whose publish is failing (its Enqueue then deletes the key): claimKey
// returns such an id only once its job is stored, and claims the key
// for id once it is deleted. So the same key never gives two Enqueues
// two jobs, nor one an id that names nothing.
func (q *Queue) claimKey(ctx context.Context, key string, id ID) (first ID, taken bool, err error) {
	k := keyOf(key)
	for pause := time.Millisecond; ; pause = min(2*pause, 100*time.Millisecond) {
		_, err := q.keys.Create(ctx, k, []byte(id))
		if err == nil {
			return id, false, nil
		}
		if !errors.Is(err, jetstream.ErrKeyExists) {
			return "", false, fmt.Errorf("natsjobs: key %q: %w", key, err)
		}
		e, err := q.keys.Get(ctx, k)
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			continue // deleted since: claim it
		}
		if err != nil {
			return "", false, fmt.Errorf("natsjobs: key %q: %w", key, err)
		}
		first = ID(e.Value())
		stored, err := q.stored(ctx, first)
		if err != nil {
			return "", false, fmt.Errorf("natsjobs: key %q: %w", key, err)
		}
		// A claim older than keyClaimed names a job stored long ago, and
		// perhaps past Retention since.
		if stored || time.Since(e.Created()) > keyClaimed {
			return first, true, nil
		}
		if q.keyWaits != nil {
			q.keyWaits <- first
		}
		if sleep(ctx, pause); ctx.Err() != nil {
			return "", false, fmt.Errorf("natsjobs: key %q names job %s, not stored yet: %w", key, first, ctx.Err())
		}
	}
}

// stored reports whether job id is stored: waiting, or with a record.
func (q *Queue) stored(ctx context.Context, id ID) (bool, error) {
	_, _, err := q.lookup(ctx, id)
	if errors.Is(err, ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}
