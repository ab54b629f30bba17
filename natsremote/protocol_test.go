package natsremote

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/internal/outcome"
	"github.com/offloadgo/offload/internal/registry"
	"github.com/offloadgo/offload/internal/seam"
	"github.com/offloadgo/offload/natsremote/embedded"
	"github.com/offloadgo/offload/pool"
)

// The protocol, spoken to real nodes and submitters by hand.

// The tasks these tests call by name, over the wire.
var (
	_ = pool.Register("nri.wait-ctx", func(ctx context.Context, _ struct{}) (int, error) {
		<-ctx.Done()
		return 0, context.Cause(ctx)
	})
	_ = pool.Register("nri.double", func(_ context.Context, n int) (int, error) { return 2 * n, nil })
)

func conn(t *testing.T) *nats.Conn {
	t.Helper()
	s, err := embedded.Start(embedded.Options{})
	require.NoError(t, err)
	t.Cleanup(s.Shutdown)
	nc, err := s.Connect()
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	return nc
}

// serveNode runs a node of one worker on nc until the test ends and
// returns its advert, read from its first one.
func serveNode(t *testing.T, nc *nats.Conn, name string) advert {
	t.Helper()
	return serveNodeWith(t, nc, name, pool.Options{Workers: 1})
}

// serveNodeWith is serveNode with local as the node's pool options.
func serveNodeWith(t *testing.T, nc *nats.Conn, name string, local pool.Options) advert {
	t.Helper()
	adverts := make(chan *nats.Msg, 16)
	sub, err := nc.ChanSubscribe(advertSubject(name), adverts)
	require.NoError(t, err)
	defer sub.Unsubscribe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Serve(ctx, nc, ServeOptions{Pool: name, Heartbeat: time.Hour, Logger: slog.New(slog.DiscardHandler),
			Local: local})
	}()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
	})
	a, err := parseAdvert((<-adverts).Data)
	require.NoError(t, err)
	return a
}

// call sends a raw call to a node and returns its answer.
func call(t *testing.T, nc *nats.Conn, subject string, head callHead, deadline uint64) (header, []byte) {
	t.Helper()
	reply, err := nc.Request(subject, callMsg(header{id: 1, arg: deadline, token: 77}, head), 10*time.Second)
	require.NoError(t, err)
	h, body, err := parseHeader(reply.Data)
	require.NoError(t, err)
	assert.EqualValues(t, 77, h.token, "an answer carries the call's token")
	return h, body
}

// callMsg is a raw call (id, token and deadline from h) of head's task,
// with {} as its input.
func callMsg(h header, head callHead) []byte {
	h.kind = kindCall
	head.heartbeat = uint64(time.Hour)
	msg := appendCallHead(appendHeader(nil, h), head)
	return append(msg, 0x80) // {} as msgpack: an empty struct's input
}

// A node refuses a call for a task it lacks or has in another version,
// one that comes after its start bound, and ends a call whose deadline
// (which travels with it) passes.
func TestNodeRefusesAndEnds(t *testing.T) {
	t.Parallel()
	nc := conn(t)
	a := serveNode(t, nc, "raw")
	subject := nodeSubject("raw", a.name, a.suffix)
	e, ok := registry.Lookup("nri.wait-ctx")
	require.True(t, ok)

	h, body := call(t, nc, subject, callHead{task: "nri.nothing", fingerprint: e.Fingerprint}, 0)
	assert.Equal(t, kindUnknown, h.kind)
	assert.Contains(t, string(body), `task "nri.nothing" is not registered`)

	h, body = call(t, nc, subject, callHead{task: "nri.wait-ctx", fingerprint: e.Fingerprint + 1}, 0)
	assert.Equal(t, kindUnknown, h.kind)
	assert.Contains(t, string(body), "another version")

	past := uint64(time.Now().Add(-time.Millisecond).UnixNano())
	h, _ = call(t, nc, subject, callHead{task: "nri.wait-ctx", fingerprint: e.Fingerprint, startBy: past}, 0)
	assert.Equal(t, kindLate, h.kind, "a call past its start bound never starts")

	start := time.Now()
	h, body = call(t, nc, subject, callHead{task: "nri.wait-ctx", fingerprint: e.Fingerprint}, uint64(start.Add(100*time.Millisecond).UnixNano()))
	assert.Equal(t, kindEnded, h.kind, "%s", body)
	assert.Equal(t, []byte{byte(outcome.Deadline)}, body)
	assert.GreaterOrEqual(t, time.Since(start), 100*time.Millisecond)
	assert.LessOrEqual(t, h.arg, uint64(1), "the answer carries the node's free slots")
}

// events counts what a transport reports.
type events struct{ joined, lost, left, terminated, moreSlots atomic.Int32 }

func (e *events) MoreSlots() { e.moreSlots.Add(1) }

func (e *events) Event(ev seam.Event) {
	switch ev.Kind {
	case seam.NodeJoined:
		e.joined.Add(1)
	case seam.NodeLost:
		e.lost.Add(1)
	case seam.NodeLeft:
		e.left.Add(1)
	case seam.NodeTaskCanceled:
		e.terminated.Add(1)
	}
}

// bind binds a submitter for pool name on nc, without a pool around it.
func bind(t *testing.T, nc *nats.Conn, name string) (*submitter, *events) {
	t.Helper()
	tr, err := New(nc, Options{Pool: name, Heartbeat: TestHeartbeat})
	require.NoError(t, err)
	stop, cancel := context.WithCancel(context.Background())
	ev := &events{}
	bound, err := tr.Bind(seam.Env{Workers: 1, Stop: stop, Events: ev, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	t.Cleanup(cancel)
	return bound.(*submitter), ev
}

// fake is a node spoken by hand: it advertises free slots for pool, and
// answers pings while pongs is set (with none of the listed calls
// missing, unless forget is set); handle gets every other message.
type fake struct {
	nc           *nats.Conn
	name, suffix string
	free         int
	pongs        atomic.Bool
	forget       atomic.Bool
	pinged       atomic.Int64 // pings answered
}

func fakeNode(t *testing.T, nc *nats.Conn, pool, name string, free int, handle func(m *nats.Msg, h header)) *fake {
	t.Helper()
	f := &fake{nc: nc, name: name, suffix: "fake", free: free}
	f.pongs.Store(true)
	sub, err := nc.Subscribe(nodeSubject(pool, f.name, f.suffix), func(m *nats.Msg) {
		h, body, err := parseHeader(m.Data)
		require.NoError(t, err)
		if h.kind != kindPing {
			handle(m, h)
			return
		}
		if !f.pongs.Load() {
			return
		}
		var missing []uint64
		if f.forget.Load() {
			listed, err := parseListed(body)
			require.NoError(t, err)
			for _, l := range listed {
				missing = append(missing, l.id)
			}
		}
		st := status{workers: f.free, free: f.free, heartbeat: time.Hour}
		pong := appendStatus(appendHeader(nil, header{kind: kindPong, id: h.id, arg: uint64(f.free), token: h.token}), st)
		_ = m.Respond(appendIDs(pong, missing))
		f.pinged.Add(1)
	})
	require.NoError(t, err)
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	advert := appendAdvert(nil, advert{status: status{workers: free, free: free, heartbeat: time.Hour}, name: f.name, suffix: f.suffix})
	dsub, err := nc.Subscribe(discoverSubject(pool), func(*nats.Msg) { _ = nc.Publish(advertSubject(pool), advert) })
	require.NoError(t, err)
	t.Cleanup(func() { _ = dsub.Unsubscribe() })
	require.NoError(t, nc.Publish(advertSubject(pool), advert))
	return f
}

// answer answers a call the fake was sent (h its header) with kind and
// body, echoing its ID and token.
func (f *fake) answer(m *nats.Msg, h header, kind byte, body []byte) {
	_ = m.Respond(append(appendHeader(nil, header{kind: kind, id: h.id, arg: uint64(f.free), token: h.token}), body...))
}

// exchange runs task with input in through a runner of s.
func exchange(ctx context.Context, s *submitter, task string, in int) (int, error) {
	var out int
	_, err := exchangeCall(ctx, s, task, in, &out)
	return out, err
}

// exchangeCall is exchange that also returns the call, for its
// hand-over's state.
func exchangeCall(ctx context.Context, s *submitter, task string, in int, out *int) (*seam.Call, error) {
	payload, err := s.Encode(task, nil, in, seam.Msgpack)
	if err != nil {
		return nil, err
	}
	m := &seam.Call{Task: task, Payload: payload, Out: out, Handover: &seam.Handover{}}
	if d, ok := ctx.Deadline(); ok {
		m.Deadline = d
	}
	return m, s.NewRunner(1).Exchange(ctx, m)
}

func waitKnown(t *testing.T, s *submitter, n int) {
	t.Helper()
	require.Eventually(t, func() bool { return len(s.Nodes()) == n }, 10*time.Second, time.Millisecond)
}

// A node that refuses a task is not sent it again; with no node left that
// may have it, the call fails with ErrUnknownTask.
func TestRefusingNodes(t *testing.T) {
	t.Parallel()
	nc := conn(t)
	var refusals atomic.Int32
	var f *fake
	f = fakeNode(t, nc, "refuse", "fake", 4, func(m *nats.Msg, h header) {
		if h.kind == kindCall {
			refusals.Add(1)
			f.answer(m, h, kindUnknown, []byte("not here"))
		}
	})
	s, _ := bind(t, nc, "refuse")
	waitKnown(t, s, 1)
	_, err := exchange(context.Background(), s, "nri.double", 1)
	require.ErrorIs(t, err, pool.ErrUnknownTask)

	serveNode(t, nc, "refuse")
	waitKnown(t, s, 2)
	for i := range 20 {
		out, err := exchange(context.Background(), s, "nri.double", i)
		require.NoError(t, err)
		assert.Equal(t, 2*i, out)
	}
	assert.EqualValues(t, 1, refusals.Load(), "refused once, never asked again")
}

// A node that answers twice has its second answer dropped; one that says
// it lacks a call it was sent loses the call; one that says nothing at
// all is lost within the bound, and the call's end is reported.
func TestAnswersThatDoNotCount(t *testing.T) {
	t.Parallel()
	nc := conn(t)
	var f *fake
	f = fakeNode(t, nc, "odd", "fake", 1, func(m *nats.Msg, h header) {
		if h.kind == kindCall && f.pongs.Load() && !f.forget.Load() {
			f.answer(m, h, kindResult, []byte{0x07})
			f.answer(m, h, kindResult, []byte{0x08})
		}
	})
	s, ev := bind(t, nc, "odd")
	waitKnown(t, s, 1)
	out, err := exchange(context.Background(), s, "nri.double", 1)
	require.NoError(t, err)
	assert.Equal(t, 7, out)
	require.Eventually(t, func() bool { return s.dropped.Load() == 1 }, 10*time.Second, time.Millisecond)

	f.forget.Store(true)
	_, err = exchange(context.Background(), s, "nri.double", 1)
	require.ErrorIs(t, err, pool.ErrNodeLost)
	assert.Contains(t, err.Error(), "no longer has the call")

	f.pongs.Store(false)
	start := time.Now()
	_, err = exchange(context.Background(), s, "nri.double", 1)
	require.ErrorIs(t, err, pool.ErrNodeLost)
	assert.Less(t, time.Since(start), 3*s.o.Heartbeat+SchedulingSlack)
	require.Eventually(t, func() bool { return ev.lost.Load() == 1 }, 10*time.Second, time.Millisecond,
		"the silent node's loss is reported (outside the lock, after the call failed)")
}

// Adverts of nodes that don't exist (no one subscribes to their subjects)
// never grow the node table past its bounds, and leave it as soon as NATS
// says nobody is there.
func TestForgedAdvertsAreBounded(t *testing.T) {
	t.Parallel()
	nc := conn(t)
	s, _ := bind(t, nc, "ghosts")
	maxSeen, maxProbe := 0, 0
	for i := range 5000 {
		a := advert{status: status{workers: 8, free: 8, heartbeat: time.Second}, name: "ghost", suffix: fmt.Sprint(i)}
		require.NoError(t, nc.Publish(advertSubject("ghosts"), appendAdvert(nil, a)))
		if i%100 == 0 {
			s.mu.Lock()
			maxSeen, maxProbe = max(maxSeen, len(s.nodes)), max(maxProbe, s.probing)
			s.mu.Unlock()
		}
	}
	require.NoError(t, nc.Flush())
	assert.LessOrEqual(t, maxSeen, maxNodes)
	assert.LessOrEqual(t, maxProbe, maxProbing)
	require.Eventually(t, func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return len(s.nodes) == 0 && s.probing == 0
	}, 10*time.Second, time.Millisecond, "every ghost is dropped: nobody answers its ping")
	assert.Empty(t, s.Nodes())
}

// A flood of requests to advertise draws one advert per gap from a node,
// not one each.
func TestDiscoverFloodDrawsFewAdverts(t *testing.T) {
	t.Parallel()
	nc := conn(t)
	adverts := make(chan *nats.Msg, 1<<16)
	sub, err := nc.ChanSubscribe(advertSubject("flood"), adverts)
	require.NoError(t, err)
	defer sub.Unsubscribe()
	serveNode(t, nc, "flood")
	<-adverts // the first, as it starts
	start := time.Now()
	for range 20000 {
		require.NoError(t, nc.Publish(discoverSubject("flood"), nil))
	}
	require.NoError(t, nc.Flush())
	// The flood is answered: wait for that advert, then count. The bound
	// is a rate, so it holds at whatever moment it is counted.
	select {
	case <-adverts:
	case <-time.After(10 * time.Second):
		t.Fatal("the flood drew no advert")
	}
	took := time.Since(start)
	got := 1 + len(adverts)
	gap := 100 * time.Millisecond // the node's heartbeat is an hour: its gap is the longest
	assert.LessOrEqual(t, got, int(took/gap)+2, "20000 requests in %v drew %d adverts", took, got)
	assert.Positive(t, got, "they are answered")
}

// A node's "ended" answer (the task's ctx ended there: its deadline passed
// on the node's clock) is a termination, whatever comes first: taken
// before the caller's own ctx ends, it leaves the call's hand-over "sent",
// so that the caller, whose ctx ends next, hears ErrTerminated with its
// ctx error, never the plain ctx error of a call that never ran. The fake
// node forces that order: it answers "ended" at once.
func TestEndedAnswerMeansTerminated(t *testing.T) {
	t.Parallel()
	nc := conn(t)
	var f *fake
	f = fakeNode(t, nc, "ended", "fake", 1, func(m *nats.Msg, h header) {
		if h.kind == kindCall {
			f.answer(m, h, kindEnded, []byte{byte(outcome.Deadline)})
		}
	})
	s, _ := bind(t, nc, "ended")
	waitKnown(t, s, 1)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out int
	m, err := exchangeCall(ctx, s, "nri.double", 1, &out)
	require.ErrorIs(t, err, pool.ErrTerminated)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	m.Handover.Quit() // the caller's ctx ends now
	assert.True(t, m.Handover.Terminates(), "the caller is told the task was terminated")
}

// The pool hears when its nodes come to offer more slots (a node joined),
// so that callers blocked for room get it without waiting for a freed
// slot; it hears nothing when they offer fewer.
func TestMoreSlotsReachThePool(t *testing.T) {
	t.Parallel()
	nc := conn(t)
	s, ev := bind(t, nc, "more-slots")
	fakeNode(t, nc, "more-slots", "a", 2, func(*nats.Msg, header) {})
	require.Eventually(t, func() bool { return s.Slots() == 2 }, 10*time.Second, time.Millisecond)
	require.Eventually(t, func() bool { return ev.moreSlots.Load() == 1 }, 10*time.Second, time.Millisecond)
	fakeNode(t, nc, "more-slots", "b", 3, func(*nats.Msg, header) {})
	require.Eventually(t, func() bool { return s.Slots() == 5 }, 10*time.Second, time.Millisecond)
	require.Eventually(t, func() bool { return ev.moreSlots.Load() == 2 }, 10*time.Second, time.Millisecond)
}
