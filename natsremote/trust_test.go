package natsremote_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/internal/testkit"
	"github.com/offloadgo/offload/natsremote"
	"github.com/offloadgo/offload/natsremote/embedded"
	"github.com/offloadgo/offload/pool"
)

// tally counts the runs of each key, and returns it marked.
var (
	tallies sync.Map // key -> *atomic.Int32
	tally   = pool.Register("nr.tally", func(_ context.Context, key string) (string, error) {
		n, _ := tallies.LoadOrStore(key, new(atomic.Int32))
		n.(*atomic.Int32).Add(1)
		return key + "!", nil
	})
)

func runsOf(key string) int32 {
	n, ok := tallies.Load(key)
	if !ok {
		return 0
	}
	return n.(*atomic.Int32).Load()
}

// trustServer is an embedded server with authentication on, and the
// documented permissions for a submitter (svc), a node (worker) and a
// second node's credentials in the wrong hands (rogue), with publish
// rights on every inbox too, so that its forgeries reach the pool rather
// than being refused by the server.
func trustServer(t *testing.T, name string) *embedded.Server {
	t.Helper()
	rogue := natsremote.NodePermissions(name, "rogue")
	rogue.Publish = append(rogue.Publish, natsremote.DefaultInboxPrefix+".>")
	return startServer(t, embedded.Options{Users: []embedded.User{
		asUser("svc", natsremote.SubmitterPermissions(name, "")),
		asUser("worker", natsremote.NodePermissions(name, "worker")),
		asUser("rogue", rogue),
	}})
}

// asUser is an embedded server's user with the permissions p.
func asUser(name string, p natsremote.Permissions) embedded.User {
	u := embedded.User{Name: name, Password: name + "-pw", Publish: p.Publish, Subscribe: p.Subscribe}
	if r := p.Responses; r != nil {
		u.Responses = &embedded.Responses{MaxMsgs: r.MaxMsgs, Expires: r.Expires}
	}
	return u
}

func connectAs(t *testing.T, s *embedded.Server, user string, opts ...nats.Option) *nats.Conn {
	t.Helper()
	// Permission violations are the point of some tests: the default
	// handler would print them. A test that wants them sets its own.
	quietErrors := nats.ErrorHandler(func(*nats.Conn, *nats.Subscription, error) {})
	nc, err := s.Connect(append([]nats.Option{quietErrors, nats.UserInfo(user, user+"-pw")}, opts...)...)
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	return nc
}

// The protocol runs with the documented least permissions, and a rogue
// holding a node's credentials can't forge what counts: it can't read
// another node's calls, and its forged answers, pongs and adverts change
// no call's outcome — every call runs once, on the real node, and
// returns its real output — while its own "full" answers, with a
// thousand free slots claimed, cost a call one try, not thousands.
func TestRogueNodeCredentialsForgeNothing(t *testing.T) {
	t.Parallel()
	const name = "trust"
	s := trustServer(t, name)
	workerAdverts := make(chan advertSeen, 1)
	serveAs(t, s, "worker", natsremote.ServeOptions{Pool: name, Name: "worker", Heartbeat: trustHeartbeat, Local: pool.Options{Workers: 4}})

	// The rogue: node credentials, and what it could learn as a node.
	var violations atomic.Int32
	rogue := connectAs(t, s, "rogue", nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
		if strings.Contains(err.Error(), "Permissions Violation") {
			violations.Add(1)
		}
	}))
	var stolen atomic.Int32
	spy, err := rogue.Subscribe("offload."+name+".node.worker.*", func(*nats.Msg) { stolen.Add(1) })
	require.NoError(t, err)
	defer spy.Unsubscribe()
	r := startRogue(t, rogue, name)

	p := remotePoolBeating(t, connectAs(t, s, "svc"), name, trustHeartbeat, pool.Options{Workers: 4})
	require.Eventually(t, func() bool { return len(p.Nodes()) == 2 }, 10*time.Second, time.Millisecond,
		"the worker and the rogue (which answers pings) are nodes")
	worker := ""
	for _, n := range p.Nodes() {
		if strings.HasPrefix(n.ID, "worker-") {
			worker = n.ID
		}
	}
	require.NotEmpty(t, worker)
	workerAdverts <- advertSeen{name: "worker", suffix: strings.TrimPrefix(worker, "worker-")}
	r.forgeAdverts(workerAdverts)

	ctx := testCtx(t)
	prefix := fmt.Sprintf("trust-%d-", rand.Int())
	var fs []*pool.Future[string]
	for i := range 40 {
		f, err := pool.SubmitBlocking(ctx, p, tally, fmt.Sprint(prefix, i))
		require.NoError(t, err)
		fs = append(fs, f)
		time.Sleep(time.Millisecond) // spread over the rogue's forgeries
	}
	require.Eventually(t, func() bool { return r.ghosts.Load() == 20000 }, 10*time.Second, time.Millisecond,
		"the rogue advertised all its ghosts while the calls ran")
	for i, f := range fs {
		out, err := f.Wait()
		require.NoError(t, err, "call %d", i)
		assert.Equal(t, fmt.Sprint(prefix, i, "!"), out)
		assert.EqualValues(t, 1, runsOf(fmt.Sprint(prefix, i)), "call %d ran once", i)
	}
	r.stop()
	st := p.Stats()
	assert.EqualValues(t, 40, st.Completed, "%+v", st)
	assert.Zero(t, st.Failed)
	assert.Zero(t, stolen.Load(), "the rogue read none of the worker's calls")
	assert.Positive(t, violations.Load(), "the server refused the rogue's subscription")
	assert.Positive(t, r.forged.Load(), "the rogue did forge")
	assert.LessOrEqual(t, r.calls.Load(), int32(len(fs)), "its 'full' answers cost a call a try at most, never a loop")
	t.Logf("the rogue forged %d messages, was sent %d calls, answered each 'full'", r.forged.Load(), r.calls.Load())
	assert.Len(t, p.Nodes(), 2, "the forged adverts of 20000 nodes made none a node")
}

// trustHeartbeat is the rogue tests' heartbeat. The rogue's flood lands
// on the submitter's inbox, where the real node's pongs queue behind it;
// on a busy machine under -race that backlog held a pong past 2.5 s (at
// a 1 s heartbeat, load ~20), and the real node was lost: liveness
// working, not what these tests are about.
const trustHeartbeat = 3 * time.Second

// forgeEvery is how often the rogue sends a round of 100 forged answers
// and pongs: 10,000 a second, which a submitter under -race on a busy
// machine keeps up with. At one round a millisecond the flood outran
// the inbox on a machine so busy that the test ran for a minute (CI,
// every package at once): its backlog held the real node's pongs past
// two heartbeats (or passed the inbox's pending limit, 65,536 messages,
// where the client drops them), and the node was lost. That is a denial
// of service, which node credentials with publish rights on the inboxes
// allow (see the README), not the forgery these tests are about.
const forgeEvery = 10 * time.Millisecond

// serveAs runs a node on a connection as user, at o's heartbeat or
// testHeartbeat.
func serveAs(t *testing.T, s *embedded.Server, user string, o natsremote.ServeOptions) {
	t.Helper()
	if o.Heartbeat == 0 {
		o.Heartbeat = testHeartbeat
	}
	o.Logger = quiet
	nc := connectAs(t, s, user)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- natsremote.Serve(ctx, nc, o) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
	})
}

type advertSeen struct{ name, suffix string }

// rogue is a node that answers every call "full" with a thousand free
// slots, and from what it learns — the pool's inbox, the layout of its
// reply subjects — forges answers to calls it was never sent, pongs, and
// adverts.
type rogue struct {
	nc                    *nats.Conn
	pool                  string
	forged, calls, ghosts atomic.Int32
	done                  chan struct{}
	wg                    sync.WaitGroup
	inbox                 atomic.Pointer[string]
}

func startRogue(t *testing.T, nc *nats.Conn, name string) *rogue {
	t.Helper()
	r := &rogue{nc: nc, pool: name, done: make(chan struct{})}
	_, err := nc.Subscribe("offload."+name+".node.rogue.r1", func(m *nats.Msg) {
		if len(m.Data) < 26 || strings.Count(m.Reply, ".") < 3 {
			return // not a call or a ping (a cancel has no reply subject)
		}
		kind, id, token := m.Data[1], binary.BigEndian.Uint64(m.Data[2:]), binary.BigEndian.Uint64(m.Data[18:])
		tokens := strings.SplitN(m.Reply, ".", 3)
		inbox := tokens[0] + "." + tokens[1]
		r.inbox.Store(&inbox)
		switch kind {
		case 1: // a call: "full", with a thousand free slots
			r.calls.Add(1)
			_ = m.Respond(rogueHeader(16, id, 1000, token)) // kind 16: full
		case 3: // a ping: a pong that says so too
			_ = m.Respond(append(rogueHeader(26, id, 1000, token), rogueStatus(1000)...))
		}
	})
	require.NoError(t, err)
	_, err = nc.Subscribe("offload."+name+".discover", func(*nats.Msg) { r.advertise("rogue", "r1", 1000, false) })
	require.NoError(t, err)
	require.NoError(t, nc.Flush())
	r.wg.Go(r.forgeAnswers)
	t.Cleanup(r.stop)
	return r
}

func (r *rogue) stop() {
	select {
	case <-r.done:
	default:
		close(r.done)
	}
	r.wg.Wait()
}

// forgeAnswers advertises the rogue, and sends, every forgeEvery, answers
// of every kind to the calls around the IDs in use, and pongs for the node
// keys, all with tokens and reply secrets it made up.
func (r *rogue) forgeAnswers() {
	for i := 0; ; i++ {
		select {
		case <-r.done:
			return
		case <-time.After(forgeEvery):
		}
		if i%10 == 0 {
			r.advertise("rogue", "r1", 1000, false) // as a node does, each heartbeat or so
		}
		inbox := r.inbox.Load()
		if inbox == nil {
			continue
		}
		for id := uint64(1); id <= 100; id++ {
			kind := []byte{16, 17, 18, 19, 23, 25, 26}[rand.IntN(7)] // full, unknown, result, error, crashed, lost, pong
			h := rogueHeader(kind, id, 1000, rand.Uint64())
			subject := fmt.Sprintf("%s.c.%d.%016x%016x", *inbox, id, rand.Uint64(), rand.Uint64())
			switch kind {
			case 18:
				h = append(h, 0xa1, 'X') // a msgpack string, as a result
			case 26:
				h = append(append(h, rogueStatus(0)...), make([]byte, 8)...) // a pong that calls a call lost
				subject = fmt.Sprintf("%s.p.%d.%016x%016x", *inbox, id, rand.Uint64(), rand.Uint64())
			}
			_ = r.nc.Publish(subject, h)
			r.forged.Add(1)
		}
	}
}

// forgeAdverts says, every 5 ms, that the worker node leaves, and adverts
// 20000 nodes that do not exist.
func (r *rogue) forgeAdverts(worker <-chan advertSeen) {
	w := <-worker
	r.wg.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-r.done:
				return
			case <-time.After(5 * time.Millisecond):
			}
			r.advertise(w.name, w.suffix, 0, true)
			for j := range 1000 {
				if i*1000+j < 20000 {
					r.advertise("ghost", fmt.Sprint(i*1000+j), 8, false)
					r.ghosts.Add(1)
				}
			}
		}
	})
}

func (r *rogue) advertise(name, suffix string, free int, leaving bool) {
	b := appendGhostAdvert(name, suffix, free)
	if leaving {
		b[26+17-1] = 1 // the status's flags byte, after the header (26 bytes) and 16 of status
	}
	_ = r.nc.Publish("offload."+r.pool+".adverts", b)
	r.forged.Add(1)
}

// rogueHeader and rogueStatus write the wire format by hand, as a rogue
// would, from the protocol's documentation.
func rogueHeader(kind byte, id, arg, token uint64) []byte {
	b := []byte{2, kind}
	b = binary.BigEndian.AppendUint64(b, id)
	b = binary.BigEndian.AppendUint64(b, arg)
	return binary.BigEndian.AppendUint64(b, token)
}

func rogueStatus(free int) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(free))
	b = binary.BigEndian.AppendUint32(b, 0)
	b = binary.BigEndian.AppendUint64(b, uint64(time.Hour))
	return append(b, 0)
}

// Adverts of a node that can't receive its calls — its user may not
// subscribe to its subject: Serve refuses to run such a node, but a forger
// may advertise one — and of a node that does not exist never hold a
// call: only a node that answers on its own subject gets calls, and every
// call, none with a deadline, runs on the real node.
func TestNodesThatCannotAnswerGetNoCalls(t *testing.T) {
	t.Parallel()
	const name = "deaf"
	s := trustServer(t, name)
	err := natsremote.Serve(context.Background(), connectAs(t, s, "rogue"), natsremote.ServeOptions{Pool: name, Name: "misconfigured", Logger: quiet})
	require.ErrorIs(t, err, nats.ErrPermissionViolation)
	serveAs(t, s, "worker", natsremote.ServeOptions{Pool: name, Name: "worker", Local: pool.Options{Workers: 8}})
	forger := connectAs(t, s, "rogue")
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		deaf, ghost := appendGhostAdvert("misconfigured", "1", 8), appendGhostAdvert("nobody", "1", 8)
		for {
			_ = forger.Publish("offload."+name+".adverts", deaf)
			_ = forger.Publish("offload."+name+".adverts", ghost)
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	})
	defer func() { close(stop); wg.Wait() }()

	p := remotePool(t, connectAs(t, s, "svc"), name, pool.Options{Workers: 8})
	waitNodes(t, p, 1)
	prefix := fmt.Sprintf("deaf-%d-", rand.Int())
	var fs []*pool.Future[string]
	for i := range 8 {
		f, err := pool.Submit(context.Background(), p, tally, fmt.Sprint(prefix, i))
		require.NoError(t, err)
		fs = append(fs, f)
	}
	testkit.Within(t, 20*time.Second, "8 calls without a deadline", func() {
		for i, f := range fs {
			out, err := f.Wait()
			assert.NoError(t, err, "call %d", i)
			assert.Equal(t, fmt.Sprint(prefix, i, "!"), out)
		}
	})
	nodes := p.Nodes()
	require.Len(t, nodes, 1, "only the node that answers: %+v", nodes)
	assert.True(t, strings.HasPrefix(nodes[0].ID, "worker-"))
}

// appendGhostAdvert is an advert of a node, written by hand.
func appendGhostAdvert(name, suffix string, free int) []byte {
	b := append(rogueHeader(32, 0, uint64(free), 0), rogueStatus(free)...)
	b = binary.AppendUvarint(b, uint64(len(name)))
	b = append(b, name...)
	b = binary.AppendUvarint(b, uint64(len(suffix)))
	return append(b, suffix...)
}
