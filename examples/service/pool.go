package main

import (
	"time"

	"github.com/nats-io/nats.go"

	"github.com/offloadgo/offload/natsremote"
	"github.com/offloadgo/offload/natsremote/embedded"
	"github.com/offloadgo/offload/pool"
)

// natsPool names the Remote pool: nodes serve it with OFFLOAD_NATS_POOL=hash.
const natsPool = "hash"

// newPool makes the service's pool of workers workers. With natsURL empty
// they are worker processes of this binary on this machine; with a NATS
// URL they are the slots of worker nodes, wherever this binary runs as one
// (see natsremote.Main). closeNATS ends what newPool connected to or
// started; call it after the pool's Shutdown.
func newPool(workers int, natsURL string) (p *pool.Pool, closeNATS func(), err error) {
	if natsURL == "" {
		p, err = pool.New(pool.Options{
			Workers:   workers,
			Isolation: pool.Subprocess,
			Subprocess: pool.SubprocessOptions{
				TerminateGrace: 100 * time.Millisecond, // for a task past its deadline; then SIGKILL
				MemoryLimit:    256 << 20,              // a worker that grows past it is replaced
			},
		})
		return p, func() {}, err
	}
	nc, closeNATS, err := connectNATS(natsURL)
	if err != nil {
		return nil, nil, err
	}
	t, err := natsremote.New(nc, natsremote.Options{Pool: natsPool})
	if err == nil {
		p, err = pool.New(pool.Options{Workers: workers, Isolation: pool.Remote, Transport: t})
	}
	if err != nil {
		closeNATS()
		return nil, nil, err
	}
	return p, closeNATS, nil
}

// connectNATS connects to the NATS server at url or, for url "embedded",
// starts one in this process (listening on 127.0.0.1:4222, for nodes on
// this machine) and connects to it in memory. closeNATS closes both.
func connectNATS(url string) (nc *nats.Conn, closeNATS func(), err error) {
	if url != "embedded" {
		if nc, err = nats.Connect(url); err != nil {
			return nil, nil, err
		}
		return nc, nc.Close, nil
	}
	s, err := embedded.Start(embedded.Options{Listen: true, Port: 4222})
	if err != nil {
		return nil, nil, err
	}
	if nc, err = s.Connect(); err != nil {
		s.Shutdown()
		return nil, nil, err
	}
	return nc, func() { nc.Close(); s.Shutdown() }, nil
}
