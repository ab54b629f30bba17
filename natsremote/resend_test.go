package natsremote

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A node that answers every call "full" and at once advertises free
// slots again (here a thousand) draws, once it has turned calls away, at
// most one call per report it makes, however many calls wait for room:
// not a re-send of every waiting call, with its input, at each report.
// The bound is counted per report (the fake's pongs; its "full" answers
// report no room), so it holds however fast or slow the machine is.
func TestFullAnswersDrawOneCallPerReport(t *testing.T) {
	t.Parallel()
	const waiting, reports = 200, 40
	nc := conn(t)
	var sends atomic.Int64
	var f *fake
	advert := appendAdvert(nil, advert{status: status{workers: 1000, free: 1000, heartbeat: time.Hour}, name: "liar", suffix: "fake"})
	f = fakeNode(t, nc, "full-loop", "liar", 1000, func(m *nats.Msg, h header) {
		if h.kind == kindCall {
			sends.Add(1)
			f.answer(m, h, kindFull, nil)
			_ = nc.Publish(advertSubject("full-loop"), advert) // "room again", at once
		}
	})
	s, _ := bind(t, nc, "full-loop")
	waitKnown(t, s, 1)

	ctx, cancel := context.WithCancel(testContext(t))
	var wg sync.WaitGroup
	for i := range waiting {
		wg.Go(func() {
			_, err := exchange(ctx, s, "nri.double", i)
			assert.ErrorIs(t, err, context.Canceled)
		})
	}
	start := time.Now()
	require.Eventually(t, func() bool { return f.pinged.Load() >= reports }, time.Minute, time.Millisecond)
	// Sends first: the fake takes calls and pings on one subscription, in
	// order, so every send it counted came after the pong that drew it.
	// (Once the callers give up, each call they abandon frees its room
	// again: those sends are not counted.)
	sent := sends.Load()
	took, pongs := time.Since(start), f.pinged.Load()
	cancel()
	wg.Wait()
	t.Logf("%d waiting calls: %d sends in %v (%.0f/s), %d pongs: %.1f sends a call, %.2f a pong",
		waiting, sent, took.Round(time.Millisecond), float64(sent)/took.Seconds(), pongs,
		float64(sent)/waiting, float64(sent)/float64(pongs))
	assert.LessOrEqual(t, sent, int64(waiting)+pongs,
		"each waiting call once at first, then at most one call per report")
}

// testContext is a ctx that ends with the test, or after a minute.
func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// After a "full", a node's room is one call per report; each call sent
// after that "full" which it takes opens it by one, once; calls sent
// before it don't.
func TestWindowAfterFull(t *testing.T) {
	t.Parallel()
	n := &knownNode{window: maxSlots}
	n.free = 8
	assert.Equal(t, 8, n.room())
	n.turnedAway(10)
	assert.Equal(t, 1, n.room(), "one call per report")
	old := &pending{id: 9}
	n.took(old)
	assert.Equal(t, 1, n.room(), "a call sent before the full proves nothing")
	later := &pending{id: 11}
	n.took(later)
	n.took(later)
	assert.Equal(t, 2, n.room(), "a call taken since: one more, once")
	for id := range uint64(10) {
		n.took(&pending{id: 12 + id})
	}
	assert.Equal(t, 8, n.room(), "back to its free slots")
	assert.Equal(t, 8, n.freeLeft(), "what its adverts are compared with")
	n.sentSince = 3
	assert.Equal(t, 5, n.room())
}
