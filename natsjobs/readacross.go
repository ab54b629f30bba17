package natsjobs

import (
	"context"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// A Wait reads its job's record from the server. A read in flight when
// the connection drops is never answered (the server that had it is
// gone), and would hold the Wait until its ctx ends. The watcher ends
// an epoch each time it renews its watch; a read that epoch's end cut
// short is made again, on the connection that is back. A read that a
// bucket without a leader leaves unanswered ends with its try.

// epochNow is the watcher's current epoch: a context that ends with the
// next renewal of the watch.
func (w *watcher) epochNow() context.Context {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.epoch == nil {
		w.epoch, w.endEpoch = context.WithCancel(context.Background())
	}
	return w.epoch
}

// nextEpoch ends the current epoch and starts the next; w.mu is held.
func (w *watcher) nextEpoch() {
	if w.endEpoch != nil {
		w.endEpoch()
	}
	w.epoch, w.endEpoch = context.WithCancel(context.Background())
}

// readAcross calls read until it returns in one epoch, or fails for
// good, or ctx ends: a read that a renewal of the watch cut short, or
// that the server could not answer (a bucket electing its leader: its
// request is never answered), is made again. Each try is bounded by
// per.
func (w *watcher) readAcross(ctx context.Context, per time.Duration, read func(context.Context) (record, *jetstream.RawStreamMsg, error)) (record, *jetstream.RawStreamMsg, error) {
	for {
		epoch := w.epochNow()
		rctx, cancel := context.WithTimeout(ctx, per)
		stop := context.AfterFunc(epoch, cancel)
		r, queued, err := read(rctx)
		stop()
		cancel()
		switch {
		case err == nil || ctx.Err() != nil:
			return r, queued, err
		case epoch.Err() != nil:
			// cut short by a renewal: the connection is back
		case transient(err):
			sleep(ctx, troubleWait)
		default:
			return r, queued, err
		}
	}
}
