package natsjobs

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/nats-io/nats.go/jetstream"
)

// watcher is a queue's one watch on its status bucket, shared by every
// Wait: each subscribes to an id and hears when that id's record
// changes. It starts with the first subscriber, renews its watch when
// the connection reconnects or the watch ends under it, and ends with
// Close.
type watcher struct {
	q          *Queue
	reconnects reconnects   // set by start, read by run
	rewatches  atomic.Int64 // renewals of the watch, for tests to see

	mu       sync.Mutex
	started  bool
	starting chan struct{} // closes when the start in progress ends; nil when none is
	isClosed bool
	stop     context.CancelFunc
	done     chan struct{}
	subs     map[ID]map[*subscription]struct{}
	recent   recent
	epoch    context.Context // see readAcross
	endEpoch context.CancelFunc
}

// subscription hears of changes to one id's record: changed holds the
// latest record written since the subscriber last read it (an older one
// is dropped for it), or nil when the subscriber must read the record
// itself; done closes with the watcher. seen is the revision of the
// last change the watch passed on before it (0: none it remembers).
type subscription struct {
	id      ID
	changed chan jetstream.KeyValueEntry
	done    <-chan struct{}
	seen    uint64
}

// subscribe starts hearing of id's changes, starting the watcher first
// if need be; the caller reads the record after subscribing, so that no
// change falls between.
func (w *watcher) subscribe(ctx context.Context, id ID) (*subscription, error) {
	if err := w.ensureStarted(ctx); err != nil {
		return nil, err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.isClosed {
		return nil, ErrQueueClosed
	}
	s := &subscription{id: id, changed: make(chan jetstream.KeyValueEntry, 1), done: w.done, seen: w.recent.of(id)}
	if w.subs[id] == nil {
		w.subs[id] = map[*subscription]struct{}{}
	}
	w.subs[id][s] = struct{}{}
	return s, nil
}

// ensureStarted returns once the watcher runs. One caller at a time
// makes the first watch, under its own ctx and without w.mu, which it
// may take seconds to (a bucket electing its leader): the others wait
// for it as long as their own ctx allows, and one of them tries in turn
// if it fails.
func (w *watcher) ensureStarted(ctx context.Context) error {
	for {
		w.mu.Lock()
		switch {
		case w.isClosed:
			w.mu.Unlock()
			return ErrQueueClosed
		case w.started:
			w.mu.Unlock()
			return nil
		case w.starting != nil:
			starting := w.starting
			w.mu.Unlock()
			select {
			case <-starting:
				continue
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		starting := make(chan struct{})
		w.starting = starting
		w.mu.Unlock()
		err := w.start(ctx)
		w.mu.Lock()
		w.starting = nil
		close(starting)
		w.mu.Unlock()
		return err
	}
}

func (w *watcher) unsubscribe(s *subscription) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.subs[s.id], s)
	if len(w.subs[s.id]) == 0 {
		delete(w.subs, s.id)
	}
}

// start starts watching; the caller is ensureStarted's one starter. The
// watch is made under ctx (see firstWatch) but lives until Close.
func (w *watcher) start(ctx context.Context) error {
	// The watch outlives the Wait that starts it, and its goroutines are
	// the queue's: nothing of that Wait's ctx (its values) goes with it.
	life, stop := context.WithCancel(context.Background())
	// Listening first: a reconnect while the watch is made renews it.
	reconnects := listenReconnects(w.q.js.Conn())
	kw, err := w.firstWatch(ctx, life)
	w.mu.Lock()
	defer w.mu.Unlock()
	if err == nil && w.isClosed {
		_ = kw.Stop()
		err = ErrQueueClosed
	}
	if err != nil {
		reconnects.stop()
		stop()
		return err
	}
	w.reconnects = reconnects
	w.started, w.stop, w.done = true, stop, make(chan struct{})
	w.subs = map[ID]map[*subscription]struct{}{}
	go w.run(life, kw)
	return nil
}

func (w *watcher) run(life context.Context, kw jetstream.KeyWatcher) {
	defer close(w.done)
	defer w.reconnects.stop()
	defer func() {
		if kw != nil {
			_ = kw.Stop()
		}
	}()
	for {
		select {
		case <-life.Done():
			return
		case <-w.reconnects.ch:
			// The server may have restarted and lost the watch's consumer.
			if kw = w.rewatch(life, kw); kw == nil {
				return
			}
		case e, ok := <-kw.Updates():
			if ok {
				if e != nil {
					w.notify(e)
				}
				continue
			}
			// The watch ended under us (its consumer was lost): not
			// at once again, should the next end as soon.
			if sleep(life, troubleWait); life.Err() != nil {
				return
			}
			if kw = w.rewatch(life, kw); kw == nil {
				return
			}
		}
	}
}

// notify hands e to id's subscribers. It alone sends on their channels,
// under w.mu, so that making room for e always leaves room.
func (w *watcher) notify(e jetstream.KeyValueEntry) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.recent.add(ID(e.Key()), e.Revision())
	for s := range w.subs[ID(e.Key())] {
		select {
		case <-s.changed:
		default:
		}
		s.changed <- e
	}
}

// resync tells every subscriber to read its record again: a nil entry
// on its channel, which replaces any entry it has not read; a read in
// flight is made again (readAcross).
func (w *watcher) resync() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.nextEpoch()
	for _, subs := range w.subs {
		for s := range subs {
			select {
			case <-s.changed:
			default:
			}
			s.changed <- nil
		}
	}
}

// close ends the watch and waits for it.
func (w *watcher) close() {
	w.mu.Lock()
	if w.isClosed {
		w.mu.Unlock()
		return
	}
	w.isClosed = true
	started, stop, done, starting := w.started, w.stop, w.done, w.starting
	w.mu.Unlock()
	if starting != nil {
		<-starting // its first watch gives up with the queue's life, and is stopped
	}
	if started {
		stop()
		<-done
	}
}
