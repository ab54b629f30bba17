package natsjobs

import (
	"context"
	"errors"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// recentChanges bounds how many changes the watch remembers (see
// recent).
const recentChanges = 16384

// recent is the revision of the last change the watch passed on for
// each of the jobs of its last recentChanges changes. A Wait subscribes
// and then reads its job's record; a read that is older than a change
// the watch passed on before the subscription (a replica behind, a
// leader just elected that has not applied every change yet) would
// leave the Wait waiting for a change that has been; recent tells the
// Wait which revision its read must reach. The caller holds the
// watcher's lock.
type recent struct {
	rev  map[ID]uint64
	ring []recentChange // the last changes, oldest overwritten first
	next int
}

type recentChange struct {
	id  ID
	rev uint64
}

// add remembers that id's record reached revision rev.
func (r *recent) add(id ID, rev uint64) {
	if r.rev == nil {
		r.rev, r.ring = map[ID]uint64{}, make([]recentChange, recentChanges)
	}
	if old := r.ring[r.next]; old.id != "" && r.rev[old.id] == old.rev {
		delete(r.rev, old.id)
	}
	r.ring[r.next] = recentChange{id, rev}
	r.next = (r.next + 1) % len(r.ring)
	r.rev[id] = rev
}

// of is the revision of the last change to id the watch remembers, or 0.
func (r *recent) of(id ID) uint64 { return r.rev[id] }

// catchUpFor bounds how long a Wait reads a record again that is
// older than the watch: a replica catches up in moments; a record that
// stays older has been removed since (its Retention passed).
const catchUpFor = 10 * time.Second

// lookupSince is lookup for a Wait that the watch has told of revision
// seen of id's record (0: none): a read older than seen is read again,
// for at most catchUpFor.
func (q *Queue) lookupSince(ctx context.Context, id ID, seen uint64) (record, *jetstream.RawStreamMsg, error) {
	end := time.Now().Add(catchUpFor)
	for seen > 0 && time.Now().Before(end) {
		r, rev, err := q.record(ctx, id)
		switch {
		case err == nil && rev >= seen:
			return r, nil, nil
		case err != nil && !errors.Is(err, ErrNotFound):
			return r, nil, err
		}
		if sleep(ctx, troubleWait); ctx.Err() != nil {
			return r, nil, ctx.Err()
		}
	}
	return q.lookup(ctx, id)
}
