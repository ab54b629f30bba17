package natsremote_test

import (
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"go.uber.org/goleak"

	"github.com/offloadgo/offload/internal/remotetest"
	"github.com/offloadgo/offload/internal/testkit"
	"github.com/offloadgo/offload/natsremote"
	"github.com/offloadgo/offload/natsremote/embedded"
	"github.com/offloadgo/offload/pool"
)

func TestMain(m *testing.M) {
	natsremote.Main() // the test binary is also the node processes and their worker processes
	goleak.VerifyTestMain(m)
}

// testHeartbeat is the tests' heartbeat (see natsremote.TestHeartbeat).
const testHeartbeat = natsremote.TestHeartbeat

// The package's tests take the shared harness (internal/remotetest) at
// their own heartbeat, under short names.
var (
	harness     = remotetest.Harness{Heartbeat: testHeartbeat}
	quiet       = remotetest.Quiet
	startServer = remotetest.StartServer
	connect     = remotetest.Connect
	serve       = harness.Serve
	serveOn     = harness.ServeOn
	remotePool  = harness.RemotePool
	waitNodes   = remotetest.WaitNodes
	testCtx     = testkit.Ctx
	startNode   = harness.StartNode
)

// nodeProcess is this test binary started as a worker node.
type nodeProcess = remotetest.NodeProcess

// node is a Serve running for a test.
type node = remotetest.Served

// remotePoolBeating is remotePool with heartbeat as its transport's.
func remotePoolBeating(t *testing.T, nc *nats.Conn, name string, heartbeat time.Duration, o pool.Options) *pool.Pool {
	t.Helper()
	return remotetest.Harness{Heartbeat: heartbeat}.RemotePool(t, nc, name, o)
}

// oneNodePool starts a server and a node of workers serving the pool
// named name on it, and returns the server and a Remote pool of o that
// sees the node.
func oneNodePool(t *testing.T, name string, workers int, o pool.Options) (*embedded.Server, *pool.Pool) {
	t.Helper()
	s := startServer(t, embedded.Options{})
	serve(t, s, natsremote.ServeOptions{Pool: name, Local: pool.Options{Workers: workers}})
	p := remotePool(t, connect(t, s), name, o)
	waitNodes(t, p, 1)
	return s, p
}
