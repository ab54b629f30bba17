package natsremote_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/offloadgo/offload/natsremote"
	"github.com/offloadgo/offload/natsremote/embedded"
	"github.com/offloadgo/offload/pool"
)

// exampleNode is a worker node served in this process for the examples
// of node events, and the Remote pool that uses it.
type exampleNode struct {
	server *embedded.Server
	nodeNC *nats.Conn // the node's connection
	poolNC *nats.Conn // the pool's
	stop   context.CancelFunc
	served chan error
	pool   *pool.Pool
	events chan pool.WorkerEvent
}

// startExampleNode starts a NATS server, one node serving pool name, and
// a Remote pool whose events of kind reach n.events; with a short
// heartbeat, a node that goes silent is lost in a fraction of a second.
func startExampleNode(name string, kind pool.WorkerEventKind) *exampleNode {
	const heartbeat = 50 * time.Millisecond
	s, err := embedded.Start(embedded.Options{})
	if err != nil {
		panic(err)
	}
	n := &exampleNode{server: s, served: make(chan error, 1), events: make(chan pool.WorkerEvent, 8)}
	n.nodeNC, _ = s.Connect()
	ctx, stop := context.WithCancel(context.Background())
	n.stop = stop
	go func() {
		n.served <- natsremote.Serve(ctx, n.nodeNC, natsremote.ServeOptions{Pool: name, Heartbeat: heartbeat,
			Logger: slog.New(slog.DiscardHandler), Local: pool.Options{Workers: 1, Logger: slog.New(slog.DiscardHandler)}})
	}()
	n.poolNC, _ = s.Connect()
	t, err := natsremote.New(n.poolNC, natsremote.Options{Pool: name, Heartbeat: heartbeat})
	if err != nil {
		panic(err)
	}
	n.pool, err = pool.New(pool.Options{Workers: 1, Isolation: pool.Remote, Transport: t,
		Logger: slog.New(slog.DiscardHandler),
		OnWorkerEvent: func(ev pool.WorkerEvent) {
			if ev.Kind == kind {
				select {
				case n.events <- ev: // a hook must not block the pool
				default:
				}
			}
		}})
	if err != nil {
		panic(err)
	}
	return n
}

// next returns the next event, or, after 20 seconds, one of kind 0
// ("none"): an Example must not hang.
func (n *exampleNode) next() pool.WorkerEvent {
	select {
	case ev := <-n.events:
		return ev
	case <-time.After(20 * time.Second):
		return pool.WorkerEvent{}
	}
}

// close stops the pool, the node and the server.
func (n *exampleNode) close() {
	_ = n.pool.Close()
	n.stop()
	<-n.served
	n.nodeNC.Close()
	n.poolNC.Close()
	n.server.Shutdown()
}

// A node that answers the pool's first ping is NodeJoined: it takes calls
// from then on.
func Example_nodeJoined() {
	n := startExampleNode("joined", pool.NodeJoined)
	defer n.close()
	ev := n.next()
	fmt.Println(ev.Kind, ev.Node != "")
	out, err := pool.Run(context.Background(), n.pool, add, [2]int{1, 2})
	fmt.Println(out, err)
	// Output:
	// joined true
	// 3 <nil>
}

// A node whose Serve ends says it leaves, takes no new call, finishes
// the calls it runs, and is NodeLeft: not lost, so nothing counts in
// Stats.Crashed. Here its one call waits for the pool to have heard that
// the node leaves (it offers no slot then) before it returns.
func Example_nodeLeft() {
	n := startExampleNode("left", pool.NodeLeft)
	defer n.close()
	run := exampleRuns.Add(1)
	started, release := make(chan struct{}), make(chan struct{})
	exampleGates.Store(run, [2]chan struct{}{started, release})
	f, err := pool.Submit(context.Background(), n.pool, heldUntilReleased, run)
	if err != nil {
		panic(err)
	}
	<-started
	n.stop() // the node's Serve ctx ends; it drains
	waitFor(func() bool { return n.pool.Stats().MaxWorkers == 0 })
	close(release)
	fmt.Println(f.Wait())
	ev := n.next()
	fmt.Println(ev.Kind, n.pool.Stats().Crashed)
	// Output:
	// released <nil>
	// left 0
}

// heldUntilReleased closes the first of its run's channels, then returns
// once the second is closed, or its ctx ends. It runs on a node in this
// process: the channels are the example's.
var heldUntilReleased = pool.Register("nr.example.held", func(ctx context.Context, run int64) (string, error) {
	g, _ := exampleGates.Load(run)
	gate := g.([2]chan struct{})
	close(gate[0])
	select {
	case <-gate[1]:
		return "released", nil
	case <-ctx.Done():
		return "", context.Cause(ctx)
	}
})

// exampleRuns numbers Example_nodeLeft's runs, and exampleGates holds each
// run's channels: started, release.
var (
	exampleRuns  atomic.Int64
	exampleGates sync.Map
)

// waitFor polls done for up to 20 seconds.
func waitFor(done func() bool) {
	for deadline := time.Now().Add(20 * time.Second); !done() && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
}

// A node that goes silent — killed, partitioned, its connection closed —
// is NodeLost within 3 heartbeats; it counts in Stats.Crashed, and its
// calls fail with ErrNodeLost.
func Example_nodeLost() {
	n := startExampleNode("lost", pool.NodeLost)
	defer n.close()
	out, err := pool.Run(context.Background(), n.pool, add, [2]int{3, 4})
	fmt.Println(out, err)
	n.nodeNC.Close()
	ev := n.next()
	fmt.Println(ev.Kind, ev.Err != nil, n.pool.Stats().Crashed)
	// Output:
	// 7 <nil>
	// lost true 1
}

// A task whose caller gives up while it runs on a node is
// NodeTaskCanceled: the node is told to cancel it, the caller's error
// matches ErrTerminated at once, and it counts in Stats.CanceledOnNode.
func Example_nodeTaskCanceled() {
	n := startExampleNode("canceled", pool.NodeTaskCanceled)
	defer n.close()
	ctx, cancel := context.WithCancel(context.Background())
	f, err := pool.Submit(ctx, n.pool, sleep, time.Minute)
	if err != nil {
		panic(err)
	}
	waitFor(func() bool { // until it was sent to its node
		nodes := n.pool.Nodes()
		return len(nodes) == 1 && nodes[0].InFlight == 1
	})
	cancel()
	_, err = f.Wait()
	fmt.Println(errors.Is(err, pool.ErrTerminated), errors.Is(err, context.Canceled))
	ev := n.next()
	fmt.Println(ev.Kind, n.pool.Stats().CanceledOnNode)
	// Output:
	// true true
	// task canceled 1
}
