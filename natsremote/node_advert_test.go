package natsremote

import (
	"context"
	"strings"
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

// A node that said it had no room advertises its next freed slot at
// once, whoever it said so to: a submitter may be waiting on that word.
// Said in a "full" answer, even with an advert without room (a
// discover's) in between, which tells the waiting submitter nothing new;
// or said in a pong only, as a submitter whose figures were stale hears
// it. Before the fix both freed slots waited for the next heartbeat, an
// hour away here.
func TestFreedSlotIsAdvertisedOnceNoRoomWasSaid(t *testing.T) {
	t.Parallel()
	gate, ok := registry.Lookup("nri.gate")
	require.True(t, ok)
	for _, tc := range []struct {
		name   string
		noRoom func(t *testing.T, n rawNode)
	}{
		{"full answer, then an advert without room", func(t *testing.T, n rawNode) {
			h, _ := call(t, n.nc, n.subject, callHead{task: "nri.gate", fingerprint: gate.Fingerprint}, 0)
			require.Equal(t, kindFull, h.kind, "the node's one slot is taken")
			require.NoError(t, n.nc.Publish(discoverSubject(n.pool), nil))
			require.Equal(t, 0, nextAdvert(n.ctx, t, n.adverts).free, "the discover's advert has no room in it")
		}},
		{"pong without room", func(t *testing.T, n rawNode) {
			ping := appendHeader(nil, header{kind: kindPing, id: 1, arg: uint64(time.Hour), token: 5})
			reply, err := n.nc.Request(n.subject, appendListed(ping, nil), 10*time.Second)
			require.NoError(t, err)
			h, body, err := parseHeader(reply.Data)
			require.NoError(t, err)
			require.Equal(t, kindPong, h.kind)
			st, _, err := parseStatus(h.arg, body)
			require.NoError(t, err)
			require.Equal(t, 0, st.free, "the node's one slot is taken")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := startRawNode(t, "freed-"+strings.ReplaceAll(tc.name, " ", "-"))
			answers := make(chan *nats.Msg, 1)
			inbox := nats.NewInbox()
			sub, err := n.nc.ChanSubscribe(inbox, answers)
			require.NoError(t, err)
			t.Cleanup(func() { _ = sub.Unsubscribe() })
			require.NoError(t, n.nc.Flush())
			require.NoError(t, n.nc.PublishRequest(n.subject, inbox,
				callMsg(header{id: 1, token: 1}, callHead{task: "nri.gate", fingerprint: gate.Fingerprint})))
			<-gateStarted

			tc.noRoom(t, n)

			gateOpen <- struct{}{}
			h, _, err := parseHeader(receive(n.ctx, t, answers).Data)
			require.NoError(t, err)
			require.Equal(t, kindResult, h.kind)
			require.Equal(t, 1, nextAdvert(n.ctx, t, n.adverts).free, "the freed slot is advertised before the heartbeat")
		})
	}
}

// rawNode is a node of one worker, with an hour's heartbeat, spoken to
// by hand: its subject, a subscription to its pool's adverts (from after
// its first), and a hang guard for the test.
type rawNode struct {
	nc            *nats.Conn
	pool, subject string
	adverts       chan *nats.Msg
	ctx           context.Context
}

func startRawNode(t *testing.T, name string) rawNode {
	t.Helper()
	n := rawNode{nc: conn(t), pool: name, adverts: make(chan *nats.Msg, 64)}
	a := serveNode(t, n.nc, name)
	n.subject = nodeSubject(name, a.name, a.suffix)
	sub, err := n.nc.ChanSubscribe(advertSubject(name), n.adverts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a hang guard, not a speed bound
	t.Cleanup(cancel)
	n.ctx = ctx
	return n
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
