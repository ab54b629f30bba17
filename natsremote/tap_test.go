package natsremote_test

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/natsremote"
	"github.com/offloadgo/offload/natsremote/embedded"
	"github.com/offloadgo/offload/pool"
)

// tap watches every subject of a server: what the pools and nodes say to
// each other, as the kinds of their messages.
type tap struct {
	nc *nats.Conn
	mu sync.Mutex
	// seen is every message so far, as "kind subject".
	seen []string
}

// wiretap starts watching every subject, on nc (a connection of its own).
func wiretap(t *testing.T, nc *nats.Conn) *tap {
	t.Helper()
	w := &tap{nc: nc}
	sub, err := nc.Subscribe(">", func(m *nats.Msg) {
		w.mu.Lock()
		w.seen = append(w.seen, natsremote.KindName(m.Data)+" "+m.Subject)
		w.mu.Unlock()
	})
	require.NoError(t, err)
	require.NoError(t, sub.SetPendingLimits(-1, -1))
	require.NoError(t, nc.Flush())
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	return w
}

// mark publishes a marker on from's connection and waits until the tap
// has it: everything from sent before has arrived by then.
func (w *tap) mark(t *testing.T, from *nats.Conn) int {
	t.Helper()
	subject := "tap.mark." + nats.NewInbox()[len("_INBOX."):]
	require.NoError(t, from.Publish(subject, nil))
	require.Eventually(t, func() bool { return w.index("? "+subject) >= 0 }, 10*time.Second, time.Millisecond)
	return w.index("? " + subject)
}

// index is where entry is in seen, or -1.
func (w *tap) index(entry string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	for i, e := range w.seen {
		if e == entry {
			return i
		}
	}
	return -1
}

// kinds lists the kinds of messages seen from index from on (to index to,
// or the end for -1) whose subject starts with prefix.
func (w *tap) kinds(from, to int, prefix string) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	if to < 0 {
		to = len(w.seen)
	}
	var out []string
	for _, e := range w.seen[from:to] {
		kind, subject, _ := strings.Cut(e, " ")
		if strings.HasPrefix(subject, prefix) {
			out = append(out, kind)
		}
	}
	return out
}

// count is how many messages of kind seen from index from on have a
// subject starting with prefix.
func (w *tap) count(from int, kind, prefix string) int {
	n := 0
	for _, k := range w.kinds(from, -1, prefix) {
		if k == kind {
			n++
		}
	}
	return n
}

// onlyHeartbeats runs refuse, which must publish nothing, and checks that
// nothing but the heartbeat's messages crossed the server meanwhile (nc,
// the refusing pool's connection, marks the start and the end).
func (w *tap) onlyHeartbeats(t *testing.T, nc *nats.Conn, refuse func()) {
	t.Helper()
	from := w.mark(t, nc)
	refuse()
	to := w.mark(t, nc)
	for _, kind := range w.kinds(from+1, to, "") {
		assert.Contains(t, []string{"ping", "pong", "advert"}, kind, "only the heartbeat's messages")
	}
}

// tappedPool starts a server with a tap on its wire and a node of workers
// serving pool name, and returns the tap, the pool's own connection and a
// Remote pool of o that sees the node.
func tappedPool(t *testing.T, name string, workers int, o pool.Options) (*tap, *nats.Conn, *pool.Pool) {
	t.Helper()
	s := startServer(t, embedded.Options{})
	w := wiretap(t, connect(t, s))
	serve(t, s, natsremote.ServeOptions{Pool: name, Local: pool.Options{Workers: workers}})
	nc := connect(t, s)
	p := remotePool(t, nc, name, o)
	waitNodes(t, p, 1)
	return w, nc, p
}
