package natsjobs

import (
	"context"

	"github.com/nats-io/nats.go/jetstream"
)

// A Wait reads its job's record from the server. A read in flight when
// the connection drops is never answered (the server that had it is
// gone), and would hold the Wait until its ctx ends. The watcher ends
// an epoch each time it renews its watch; a read that epoch's end cut
// short is made again, on the connection that is back.

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

// readAcross calls read with a ctx that also ends when the watch is
// renewed, and calls it again if that cut it short: until it returns
// in one epoch, or ctx ends.
func (w *watcher) readAcross(ctx context.Context, read func(context.Context) (record, *jetstream.RawStreamMsg, error)) (record, *jetstream.RawStreamMsg, error) {
	for {
		epoch := w.epochNow()
		rctx, cancel := context.WithCancel(ctx)
		stop := context.AfterFunc(epoch, cancel)
		r, queued, err := read(rctx)
		stop()
		cancel()
		if err == nil || ctx.Err() != nil || epoch.Err() == nil {
			return r, queued, err
		}
	}
}
