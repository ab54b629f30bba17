package natsremote_test

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/natsremote"
	"github.com/offloadgo/offload/natsremote/embedded"
	"github.com/offloadgo/offload/pool"
)

// NATS says that nobody took a request ("no responders") with an empty
// message whose header is Status: 503, on the request's reply subject;
// anyone allowed to publish there can send the same. A rogue holding a
// node's credentials of pool A learns A's reply subjects from the pings
// and calls sent to itself, and floods that status on every subject it
// can make of them — either kind, any number, whatever else they carry —
// and on the inboxes pool B, on the same connection, would have were its
// inbox nats.go's next after A's (a process's nats.go inboxes share
// nuid's prefix and step by 33 to 332). In both pools no call runs twice,
// no node is dropped, every call returns its real output: with the
// permissions NodePermissions gives, and with publish rights on every
// inbox.
func TestForgedNoRespondersChangeNothing(t *testing.T) {
	// Not parallel: the rogue's guess at B's inbox needs B's to be the
	// process's next after A's.
	for _, c := range []struct {
		name  string
		rogue func(pool string) natsremote.Permissions
		// refused: the server refuses the forgeries (NodePermissions
		// allows a node one answer to each request it got, and nothing
		// else on an inbox).
		refused bool
	}{
		{"node permissions", func(p string) natsremote.Permissions { return natsremote.NodePermissions(p, "rogue") }, true},
		{"publish on the inboxes", func(p string) natsremote.Permissions {
			perms := natsremote.NodePermissions(p, "rogue")
			perms.Publish = append(perms.Publish, natsremote.DefaultInboxPrefix+".>")
			perms.Responses = nil
			return perms
		}, false},
	} {
		t.Run(c.name, func(t *testing.T) { testForgedNoResponders(t, c.rogue, c.refused) })
	}
}

func testForgedNoResponders(t *testing.T, rogue func(pool string) natsremote.Permissions, refused bool) {
	const poolA, poolB = "forged-a", "forged-b"
	svc := natsremote.SubmitterPermissions(poolA, "")
	svcB := natsremote.SubmitterPermissions(poolB, "")
	svc.Publish = append(svc.Publish, svcB.Publish...)
	svc.Subscribe = append(svc.Subscribe, svcB.Subscribe...)
	s := startServer(t, embedded.Options{Users: []embedded.User{
		asUser("svc", svc),
		asUser("worker-a", natsremote.NodePermissions(poolA, "worker")),
		asUser("worker-b", natsremote.NodePermissions(poolB, "worker")),
		asUser("rogue", rogue(poolA)),
	}})
	for user, name := range map[string]string{"worker-a": poolA, "worker-b": poolB} {
		serveAs(t, s, user, natsremote.ServeOptions{Pool: name, Name: "worker", Heartbeat: trustHeartbeat, Local: pool.Options{Workers: 10}})
	}
	var violations atomic.Int32
	f := startForger(t, connectAs(t, s, "rogue", nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
		if strings.Contains(err.Error(), "Permissions Violation") {
			violations.Add(1)
		}
	})), poolA)

	var lost sync.Map // pool name → *atomic.Int32: its workers dropped
	nc := connectAs(t, s, "svc")
	pools := map[string]*pool.Pool{}
	for _, name := range []string{poolA, poolB} { // B's inbox is the next after A's
		n := new(atomic.Int32)
		lost.Store(name, n)
		pools[name] = remotePoolBeating(t, nc, name, trustHeartbeat, pool.Options{Workers: 10, OnWorkerEvent: func(ev pool.WorkerEvent) {
			if ev.Kind == pool.NodeLost && strings.HasPrefix(ev.Node, "worker-") {
				n.Add(1)
			}
		}})
	}
	waitNodes(t, pools[poolA], 2) // the worker and the rogue, which answers pings
	waitNodes(t, pools[poolB], 1)
	require.Eventually(t, func() bool { return f.knows() > 0 }, 10*time.Second, time.Millisecond, "the rogue was pinged")

	// Idle, then with every worker slot holding a call.
	f.forge(t, 3)
	k := keysFor("forged")
	ctx := testCtx(t)
	futures := map[string][]*pool.Future[string]{}
	for name, p := range pools {
		for i := range 10 {
			fu, err := pool.Submit(ctx, p, hold, k(fmt.Sprint(name, i)))
			require.NoError(t, err)
			futures[name] = append(futures[name], fu)
		}
	}
	for name := range pools {
		for i := range 10 {
			holdStarted(t, k(fmt.Sprint(name, i)))
		}
	}
	f.forge(t, 3)
	// The answers go out after the forgeries reached the server, and
	// reach each pool after them.
	for name := range pools {
		for i := range 10 {
			close(gateFor(k(fmt.Sprint(name, i))).release)
		}
	}
	for name, fs := range futures {
		twice := 0
		for i, fu := range fs {
			out, err := fu.Wait()
			assert.NoError(t, err, "%s call %d", name, i)
			assert.Equal(t, k(fmt.Sprint(name, i)), out)
			if runs := gateFor(k(fmt.Sprint(name, i))).runs.Load(); runs != 1 {
				twice++
			}
		}
		n, _ := lost.Load(name)
		dropped := n.(*atomic.Int32).Load()
		t.Logf("pool %s: %d of %d calls ran more than once; its worker was dropped %d times; the rogue forged %d statuses",
			name, twice, len(fs), dropped, f.forged.Load())
		assert.Zero(t, twice, "pool %s: calls that ran more than once", name)
		assert.Zero(t, dropped, "pool %s: its worker was dropped", name)
		assert.True(t, slices.ContainsFunc(pools[name].Nodes(), func(n pool.NodeStats) bool { return strings.HasPrefix(n.ID, "worker-") }),
			"pool %s still has its worker", name)
	}
	if refused {
		assert.Positive(t, violations.Load(), "the server refused the forgeries")
	}
}

// forger is a node, rogue.r1, of a pool: it answers pings (so that the
// pool keeps pinging it, with fresh reply subjects) and calls ("full",
// with a thousand free slots, so that it is sent calls too), and keeps
// the reply subjects it was sent.
type forger struct {
	nc      *nats.Conn
	pool    string
	mu      sync.Mutex
	learned []string // the latest last
	forged  atomic.Int64
}

func startForger(t *testing.T, nc *nats.Conn, name string) *forger {
	t.Helper()
	f := &forger{nc: nc, pool: name}
	sub, err := nc.Subscribe("offload."+name+".node.rogue.r1", func(m *nats.Msg) {
		if len(m.Data) < 26 || m.Reply == "" {
			return
		}
		f.mu.Lock()
		f.learned = append(f.learned, m.Reply)
		f.mu.Unlock()
		h := rogueHeader(0, binary.BigEndian.Uint64(m.Data[2:]), 1000, binary.BigEndian.Uint64(m.Data[18:]))
		switch m.Data[1] {
		case 1: // a call: "full"
			h[1] = 16
			_ = m.Respond(h)
		case 3: // a ping: its pong
			h[1] = 26
			_ = m.Respond(append(h, rogueStatus(1000)...))
		}
	})
	require.NoError(t, err)
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	discover, err := nc.Subscribe("offload."+name+".discover", func(*nats.Msg) {
		_ = nc.Publish("offload."+name+".adverts", appendGhostAdvert("rogue", "r1", 1000))
	})
	require.NoError(t, err)
	t.Cleanup(func() { _ = discover.Unsubscribe() })
	require.NoError(t, nc.Flush())
	return f
}

func (f *forger) knows() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.learned)
}

// forge sends "no responders" rounds times on every subject it can make
// of the last four reply subjects it learned, and on the guessed inboxes
// of the next pool, then flushes: the server has them all when it
// returns.
func (f *forger) forge(t *testing.T, rounds int) {
	t.Helper()
	f.mu.Lock()
	learned := f.learned[max(len(f.learned)-4, 0):]
	f.mu.Unlock()
	subjects := map[string]bool{}
	for _, reply := range learned {
		subjects[reply] = true
		tokens := strings.Split(reply, ".")
		if len(tokens) < 4 {
			continue
		}
		rest := ""
		if len(tokens) > 4 {
			rest = "." + strings.Join(tokens[4:], ".")
		}
		for _, kind := range []string{"c", "p"} {
			for n := 1; n <= 64; n++ {
				subjects[fmt.Sprintf("%s.%s.%s.%d%s", tokens[0], tokens[1], kind, n, rest)] = true
			}
		}
		for _, inbox := range nuidNeighbours(tokens[1]) {
			subjects[fmt.Sprintf("%s.%s.p.1%s", tokens[0], inbox, rest)] = true
			for n := 1; n <= 12; n++ {
				subjects[fmt.Sprintf("%s.%s.c.%d%s", tokens[0], inbox, n, rest)] = true
			}
		}
	}
	for range rounds {
		_ = f.nc.Publish("offload."+f.pool+".adverts", appendGhostAdvert("rogue", "r1", 1000))
		for subject := range subjects {
			_ = f.nc.PublishMsg(&nats.Msg{Subject: subject, Header: nats.Header{"Status": []string{"503"}}})
			f.forged.Add(1)
		}
	}
	require.NoError(t, f.nc.FlushTimeout(time.Minute))
}

// nuidNeighbours are the inbox tokens nats.go gives out next in a process
// that gave out token: nuid's 12-character prefix, then a sequence of 10
// base-62 digits that steps by 33 to 332.
func nuidNeighbours(token string) []string {
	const digits = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	if len(token) < 10 {
		return nil
	}
	pre, seqDigits := token[:len(token)-10], token[len(token)-10:]
	var seq int64
	for _, d := range []byte(seqDigits) {
		i := strings.IndexByte(digits, d)
		if i < 0 {
			return nil
		}
		seq = seq*62 + int64(i)
	}
	var out []string
	for step := int64(33); step < 333; step++ {
		var b [10]byte
		for i, l := 9, seq+step; i >= 0; i, l = i-1, l/62 {
			b[i] = digits[l%62]
		}
		out = append(out, pre+string(b[:]))
	}
	return out
}
