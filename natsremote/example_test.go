package natsremote_test

import (
	"context"
	"fmt"
	"time"

	"github.com/offloadgo/offload/natsremote"
	"github.com/offloadgo/offload/natsremote/embedded"
	"github.com/offloadgo/offload/pool"
)

// A worker node and a Remote pool on one machine, through an embedded
// NATS server without a listener. On several machines, the node would run
// natsremote.Serve (or pool.Main with OFFLOAD_NATS_URL set) on each, all
// connected to one NATS system.
func Example() {
	s, err := embedded.Start(embedded.Options{})
	if err != nil {
		panic(err)
	}
	defer s.Shutdown()

	// The node: a pool of its own, serving every registered task.
	nodeConn, _ := s.Connect()
	defer nodeConn.Close()
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() {
		served <- natsremote.Serve(ctx, nodeConn, natsremote.ServeOptions{Pool: "example", Local: pool.Options{Workers: 2}})
	}()
	defer func() { stop(); <-served }()

	// The submitter: a Remote pool.
	nc, _ := s.Connect()
	defer nc.Close()
	t, err := natsremote.New(nc, natsremote.Options{Pool: "example"})
	if err != nil {
		panic(err)
	}
	p, err := pool.New(pool.Options{Workers: 2, Isolation: pool.Remote, Transport: t})
	if err != nil {
		panic(err)
	}
	defer p.Shutdown(context.Background())

	runCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := pool.Run(runCtx, p, add, [2]int{40, 2}) // waits for the node to advertise, then runs there
	fmt.Println(out, err)
	// Output: 42 <nil>
}
