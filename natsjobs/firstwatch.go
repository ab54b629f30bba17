package natsjobs

import (
	"context"

	"github.com/nats-io/nats.go/jetstream"
)

// firstWatch makes the watcher's first watch, which lives until life
// ends. It tries again while the server can't make one (the bucket
// electing its leader), each try bounded, for as long as ctx allows or
// until the queue closes, which Close waits for. Other Waits meanwhile
// wait on their own ctx (see ensureStarted).
func (w *watcher) firstWatch(ctx, life context.Context) (jetstream.KeyWatcher, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(w.q.life, cancel)()
	kw, err := through(ctx, publishTry, func(try context.Context) (jetstream.KeyWatcher, error) {
		return w.watchWithin(try, life)
	})
	if err != nil && w.q.life.Err() != nil {
		return nil, ErrQueueClosed
	}
	return kw, err
}

// watchWithin makes a watch that lives until life ends, and gives up
// making it when try ends: the watch's ctx bounds its making too, and a
// request to make it that the server leaves unanswered would hold the
// caller until life ends.
func (w *watcher) watchWithin(try, life context.Context) (jetstream.KeyWatcher, error) {
	watchCtx, end := context.WithCancel(life)
	stop := context.AfterFunc(try, end)
	kw, err := w.watchUpdates(watchCtx)
	if !stop() { // try ended, and the watch with it
		if err == nil {
			_ = kw.Stop()
		}
		return nil, try.Err()
	}
	if err != nil {
		end()
		return nil, err
	}
	return kw, nil
}
