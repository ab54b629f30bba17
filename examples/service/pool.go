package main

import (
	"log"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/offloadgo/offload/natsremote"
	"github.com/offloadgo/offload/natsremote/embedded"
	"github.com/offloadgo/offload/pool"
)

// natsPool names the Remote pool: nodes serve it with OFFLOAD_NATS_POOL=hash.
const natsPool = "hash"

// newPool makes the service's pool of workers workers. With nc nil they
// are worker processes of this binary on this machine; else they are the
// slots of worker nodes reached through nc, wherever this binary runs as
// one (see natsremote.Main).
func newPool(workers int, nc *nats.Conn) (*pool.Pool, error) {
	if nc == nil {
		return pool.New(pool.Options{
			Workers:   workers,
			Isolation: pool.Subprocess,
			Subprocess: pool.SubprocessOptions{
				TerminateGrace: 100 * time.Millisecond, // for a task past its deadline; then SIGKILL
				MemoryLimit:    256 << 20,              // a worker that grows past it is replaced
			},
		})
	}
	t, err := natsremote.New(nc, natsremote.Options{Pool: natsPool})
	if err != nil {
		return nil, err
	}
	return pool.New(pool.Options{Workers: workers, Isolation: pool.Remote, Transport: t})
}

// connectNATS connects to the NATS server at url or, for url "embedded",
// starts one in this process, with JetStream (for the queue of reports)
// keeping its streams in storeDir, listening on 127.0.0.1:port (for
// worker services and nodes on this machine), and connects to it in
// memory. closeNATS closes both.
func connectNATS(url string, port int, storeDir string) (nc *nats.Conn, closeNATS func(), err error) {
	if url != "embedded" {
		if nc, err = nats.Connect(url); err != nil {
			return nil, nil, err
		}
		return nc, nc.Close, nil
	}
	s, err := embedded.Start(embedded.Options{Listen: true, Port: port, StoreDir: storeDir})
	if err != nil {
		return nil, nil, err
	}
	if nc, err = s.Connect(); err != nil {
		s.Shutdown()
		return nil, nil, err
	}
	log.Printf("NATS, with JetStream in %s, on %s", storeDir, s.ClientURL())
	return nc, func() { nc.Close(); s.Shutdown() }, nil
}
