// Package remotetest is the tests' harness for Remote pools: an embedded
// NATS server, worker nodes serving on it, and Remote pools that see
// them. The tests of natsremote build on its pieces; those of the Remote
// pool's reporters (poolprom, poolotel) take Pool, which puts them
// together. For tests only; everything ends with the test.
package remotetest

import (
	"testing"
	"time"

	"github.com/offloadgo/offload/natsremote"
	"github.com/offloadgo/offload/natsremote/embedded"
	"github.com/offloadgo/offload/pool"
	"strings"
)

// Heartbeat is Pool's nodes' and pool's heartbeat: short, so that adverts
// follow a change within a test's patience.
const Heartbeat = 20 * time.Millisecond

// Node is a worker node to start: its name and its local pool's workers.
type Node struct {
	Name    string
	Workers int
}

// Pool starts nodes serving the pool named name and returns a Remote pool
// of workers workers that knows them all. A node's ID is its Name, a dash
// and a random suffix.
func Pool(t testing.TB, name string, workers int, nodes ...Node) *pool.Pool {
	t.Helper()
	h := Harness{Heartbeat: Heartbeat}
	s := StartServer(t, embedded.Options{})
	for _, n := range nodes {
		h.Serve(t, s, natsremote.ServeOptions{Pool: name, Name: n.Name, Local: pool.Options{Workers: n.Workers}})
	}
	p := h.RemotePool(t, Connect(t, s), name, pool.Options{Workers: workers})
	WaitNodes(t, p, len(nodes))
	return p
}

// NodeName is the Name of the node whose ID is id: Pool's nodes' IDs are
// their Name, a dash and a random suffix.
func NodeName(id string) string {
	name, _, _ := strings.Cut(id, "-")
	return name
}
