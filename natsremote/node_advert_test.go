package natsremote

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/internal/registry"
	"github.com/offloadgo/offload/pool"
)

// gate's task holds its worker from the moment it says so on
// gateStarted until it receives from gateOpen. One test uses it.
var (
	gateStarted = make(chan struct{}, 1)
	gateOpen    = make(chan struct{})
	_           = pool.Register("nri.gate", func(context.Context, struct{}) (int, error) {
		gateStarted <- struct{}{}
		<-gateOpen
		return 1, nil
	})
)

// A node that turned a call away advertises its next freed slot at once,
// even when an advert without room in it (here a discover's) went out in
// between: that advert told the waiting submitter nothing new, so it does
// not count as telling it. Before the fix the freed slot waited for the
// next heartbeat, an hour away here.
func TestFreedSlotIsAdvertisedAfterAnAdvertWithoutRoom(t *testing.T) {
	t.Parallel()
	nc := conn(t)
	const name = "freed-raw"
	a := serveNode(t, nc, name) // one worker, a heartbeat of an hour
	subject := nodeSubject(name, a.name, a.suffix)
	gate, ok := registry.Lookup("nri.gate")
	require.True(t, ok)
	adverts := make(chan *nats.Msg, 64)
	sub, err := nc.ChanSubscribe(advertSubject(name), adverts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a hang guard, not a speed bound
	defer cancel()

	answers := make(chan *nats.Msg, 1)
	inbox := nats.NewInbox()
	asub, err := nc.ChanSubscribe(inbox, answers)
	require.NoError(t, err)
	t.Cleanup(func() { _ = asub.Unsubscribe() })
	require.NoError(t, nc.Flush()) // both subscriptions are the server's before anything is sent
	require.NoError(t, nc.PublishRequest(subject, inbox, callMsg(header{id: 1, token: 1}, callHead{task: "nri.gate", fingerprint: gate.Fingerprint})))
	<-gateStarted

	h, _ := call(t, nc, subject, callHead{task: "nri.gate", fingerprint: gate.Fingerprint}, 0)
	require.Equal(t, kindFull, h.kind, "the node's one slot is taken")

	require.NoError(t, nc.Publish(discoverSubject(name), nil))
	require.Equal(t, 0, nextAdvert(ctx, t, adverts).free, "the discover's advert has no room in it")

	gateOpen <- struct{}{}
	h, _, err = parseHeader(receive(ctx, t, answers).Data)
	require.NoError(t, err)
	require.Equal(t, kindResult, h.kind)
	require.Equal(t, 1, nextAdvert(ctx, t, adverts).free, "the freed slot is advertised before the heartbeat")
}

// nextAdvert is the next advert on adverts.
func nextAdvert(ctx context.Context, t *testing.T, adverts <-chan *nats.Msg) advert {
	t.Helper()
	a, err := parseAdvert(receive(ctx, t, adverts).Data)
	require.NoError(t, err)
	return a
}

// receive is the next message on ch, failing t if ctx ends first.
func receive(ctx context.Context, t *testing.T, ch <-chan *nats.Msg) *nats.Msg {
	t.Helper()
	select {
	case m := <-ch:
		return m
	case <-ctx.Done():
		require.FailNow(t, "no message before the hang guard")
		return nil
	}
}
