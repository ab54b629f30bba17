package natsremote

import (
	"sync"
)

// outbox runs, in order and on a goroutine of its own, what the submitter
// must not run under its lock or on the goroutines that read the network:
// the pool's event hook (user code, which may call Pool.Nodes, taking the
// submitter's lock) and the Logger's handler (user code too, and maybe
// slow). The submitter posts under its lock; nothing it posts ever runs
// there, and a slow hook or logger delays only what follows it here, not
// the answers and adverts of the pool.
type outbox struct {
	mu     sync.Mutex
	queue  []func()
	signal chan struct{} // buffered 1: there is something to run
	done   chan struct{} // closed when run has returned
}

func newOutbox() *outbox {
	return &outbox{signal: make(chan struct{}, 1), done: make(chan struct{})}
}

// post queues f. It never blocks, and is safe under any lock.
func (o *outbox) post(f func()) {
	o.mu.Lock()
	o.queue = append(o.queue, f)
	o.mu.Unlock()
	select {
	case o.signal <- struct{}{}:
	default:
	}
}

// run runs what is posted, in order, until stop is closed; then what is
// left, and returns.
func (o *outbox) run(stop <-chan struct{}) {
	defer close(o.done)
	for {
		select {
		case <-o.signal:
			o.drain()
		case <-stop:
			o.drain()
			return
		}
	}
}

func (o *outbox) drain() {
	for {
		o.mu.Lock()
		batch := o.queue
		o.queue = nil
		o.mu.Unlock()
		if len(batch) == 0 {
			return
		}
		for _, f := range batch {
			f()
		}
	}
}
