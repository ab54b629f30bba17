package natsjobs

import (
	"context"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// reconnects hears the queue's connection reconnect. A server that
// restarted has lost the watch's consumer, and the watch would only
// notice after missed heartbeats (10–20 s), leaving every Wait deaf
// meanwhile: the watcher renews its watch on each reconnect instead.
// It is one more status listener on the connection, beside the
// handlers the connection's owner set, which stay as they are.
type reconnects struct {
	nc *nats.Conn
	ch chan nats.Status
}

func listenReconnects(nc *nats.Conn) reconnects {
	return reconnects{nc: nc, ch: nc.StatusChanged(nats.CONNECTED)}
}

// stop removes the listener from the connection.
func (r reconnects) stop() { r.nc.RemoveStatusListener(r.ch) }

// drain forgets the reconnects heard so far: a watch made after it
// hears every change those reconnects could have hidden.
func (r reconnects) drain() {
	for {
		select {
		case <-r.ch:
		default:
			return
		}
	}
}

// watchUpdates watches the status bucket for what is written from now on.
func (w *watcher) watchUpdates(ctx context.Context) (jetstream.KeyWatcher, error) {
	return w.q.statuses.WatchAll(ctx, jetstream.UpdatesOnly(), jetstream.IgnoreDeletes())
}

// rewatch replaces old (which may be nil) with a new watch, trying
// again while the server can't make one, then has every subscriber read
// its record again: a change written while no watch heard it (a job
// that ended then) has no change to come. It returns nil once life
// ends.
func (w *watcher) rewatch(life context.Context, old jetstream.KeyWatcher) jetstream.KeyWatcher {
	if old != nil {
		_ = old.Stop()
	}
	w.reconnects.drain()
	for {
		if kw, err := w.watchUpdates(life); err == nil {
			w.resync()
			w.rewatches.Add(1)
			return kw
		}
		if sleep(life, troubleWait); life.Err() != nil {
			return nil
		}
	}
}
