package natsremote

import (
	"context"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/internal/registry"
	"github.com/offloadgo/offload/internal/transport"
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

// serveNode runs a node on nc until the test ends and returns its ID,
// read from its first advert.
func serveNode(t *testing.T, nc *nats.Conn, name string) string {
	t.Helper()
	adverts := make(chan *nats.Msg, 16)
	sub, err := nc.ChanSubscribe(advertSubject(name), adverts)
	require.NoError(t, err)
	defer sub.Unsubscribe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Serve(ctx, nc, ServeOptions{Pool: name, Heartbeat: time.Hour, Logger: slog.New(slog.DiscardHandler),
			Local: pool.Options{Workers: 1}})
	}()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
	})
	a, err := parseAdvert((<-adverts).Data)
	require.NoError(t, err)
	return a.id
}

// call sends a raw call to a node and returns its answer.
func call(t *testing.T, nc *nats.Conn, subject string, task string, fingerprint, deadline uint64) (header, []byte) {
	t.Helper()
	msg := appendHeader(nil, kindCall, 1, deadline)
	msg = appendCallHead(msg, callHead{heartbeat: uint64(time.Hour), fingerprint: fingerprint, task: task})
	msg = append(msg, 0x80) // {} as msgpack: an empty struct's input
	reply, err := nc.Request(subject, msg, 10*time.Second)
	require.NoError(t, err)
	h, body, err := parseHeader(reply.Data)
	require.NoError(t, err)
	return h, body
}

// A node refuses a call for a task it lacks or has in another version,
// and ends a call whose deadline (which travels with it) passes.
func TestNodeRefusesAndEnds(t *testing.T) {
	t.Parallel()
	nc := conn(t)
	subject := nodeSubject("raw", serveNode(t, nc, "raw"))
	e, ok := registry.Lookup("nri.wait-ctx")
	require.True(t, ok)

	h, body := call(t, nc, subject, "nri.nothing", e.Fingerprint, 0)
	assert.Equal(t, kindUnknown, h.kind)
	assert.Contains(t, string(body), `task "nri.nothing" is not registered`)

	h, body = call(t, nc, subject, "nri.wait-ctx", e.Fingerprint+1, 0)
	assert.Equal(t, kindUnknown, h.kind)
	assert.Contains(t, string(body), "another version")

	start := time.Now()
	h, body = call(t, nc, subject, "nri.wait-ctx", e.Fingerprint, uint64(start.Add(100*time.Millisecond).UnixNano()))
	assert.Equal(t, kindEnded, h.kind, "%s", body)
	assert.Equal(t, []byte{causeDeadline}, body)
	assert.GreaterOrEqual(t, time.Since(start), 100*time.Millisecond)
	assert.LessOrEqual(t, h.arg, uint64(1), "the answer carries the node's free slots")
}

// events counts what a transport reports.
type events struct{ lost, terminated atomic.Int32 }

func (e *events) Event(ev transport.Event) {
	switch ev.Kind {
	case transport.Crashed:
		e.lost.Add(1)
	case transport.Terminated:
		e.terminated.Add(1)
	}
}

// bind binds a submitter for pool name on nc, without a pool around it.
func bind(t *testing.T, nc *nats.Conn, name string) (*submitter, *events) {
	t.Helper()
	tr, err := New(nc, Options{Pool: name, Heartbeat: 50 * time.Millisecond})
	require.NoError(t, err)
	stop, cancel := context.WithCancel(context.Background())
	ev := &events{}
	bound, err := tr.Bind(transport.Env{Workers: 1, Stop: stop, Events: ev, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	t.Cleanup(cancel)
	return bound.(*submitter), ev
}

// fakeNode advertises as a node of pool name with free slots and hands
// every message to handle.
func fakeNode(t *testing.T, nc *nats.Conn, name, id string, free int, handle func(m *nats.Msg, h header)) {
	t.Helper()
	sub, err := nc.Subscribe(nodeSubject(name, id), func(m *nats.Msg) {
		h, _, err := parseHeader(m.Data)
		require.NoError(t, err)
		handle(m, h)
	})
	require.NoError(t, err)
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	advert := appendAdvert(nil, advert{id: id, workers: free, free: free, heartbeat: time.Hour})
	dsub, err := nc.Subscribe(discoverSubject(name), func(*nats.Msg) { _ = nc.Publish(advertSubject(name), advert) })
	require.NoError(t, err)
	t.Cleanup(func() { _ = dsub.Unsubscribe() })
	require.NoError(t, nc.Publish(advertSubject(name), advert))
}

// exchange runs task with input in through a runner of s.
func exchange(ctx context.Context, s *submitter, task string, in int) (int, error) {
	payload, err := s.Encode(task, in, false)
	if err != nil {
		return 0, err
	}
	var out int
	err = s.NewRunner(1).Exchange(ctx, &transport.Call{Task: task, Payload: payload, Out: &out, Handover: &transport.Handover{}})
	return out, err
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
	fakeNode(t, nc, "refuse", "fake", 4, func(m *nats.Msg, h header) {
		if h.kind == kindCall {
			refusals.Add(1)
			_ = m.Respond(append(appendHeader(nil, kindUnknown, h.id, 4), "not here"...))
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
	var mode atomic.Value
	mode.Store("twice")
	fakeNode(t, nc, "odd", "fake", 1, func(m *nats.Msg, h header) {
		switch mode.Load() {
		case "twice":
			if h.kind == kindCall {
				_ = m.Respond(append(appendHeader(nil, kindResult, h.id, 1), 0x07))
				_ = m.Respond(append(appendHeader(nil, kindResult, h.id, 1), 0x08))
			}
		case "forgets":
			if h.kind == kindPing {
				_, body, _ := parseHeader(m.Data)
				_ = m.Respond(append(appendHeader(nil, kindPong, h.id, 1), body...))
			}
		}
	})
	s, ev := bind(t, nc, "odd")
	waitKnown(t, s, 1)
	out, err := exchange(context.Background(), s, "nri.double", 1)
	require.NoError(t, err)
	assert.Equal(t, 7, out)
	require.Eventually(t, func() bool { return s.dropped.Load() == 1 }, 10*time.Second, time.Millisecond)

	mode.Store("forgets")
	_, err = exchange(context.Background(), s, "nri.double", 1)
	require.ErrorIs(t, err, pool.ErrNodeLost)
	assert.Contains(t, err.Error(), "no longer has the call")

	mode.Store("silent")
	waitKnown(t, s, 1) // it rejoins with its next advert
	start := time.Now()
	_, err = exchange(context.Background(), s, "nri.double", 1)
	require.ErrorIs(t, err, pool.ErrNodeLost)
	assert.Less(t, time.Since(start), 3*s.o.Heartbeat+SchedulingSlack)
	assert.EqualValues(t, 1, ev.lost.Load(), "the silent node's loss is reported")
}
