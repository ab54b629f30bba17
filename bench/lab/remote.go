package main

import (
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/offloadgo/offload/natsremote"
	"github.com/offloadgo/offload/natsremote/embedded"
	"github.com/offloadgo/offload/pool"
)

// remotePool makes the server's pool for a remoteN mode: a Remote pool of
// n worker nodes of one worker each, each a copy of this binary serving as
// a node (natsremote.Main, as OFFLOAD_NATS_URL says), reached through a NATS
// server embedded in the lab's server process and listening on 127.0.0.1.
// Nodes run with GOMAXPROCS 1; started with a nice increment, they run
// under nice(1), as an operator would start them. It returns once every
// node has joined; stop ends the pool, the nodes and the NATS server.
func remotePool(n, nice int, o pool.Options) (p *pool.Pool, stop func(), err error) {
	s, err := embedded.Start(embedded.Options{Listen: true})
	if err != nil {
		return nil, nil, err
	}
	var nodes []*exec.Cmd
	var nc *nats.Conn
	stop = func() {
		if p != nil {
			_ = p.Close()
		}
		for _, cmd := range nodes {
			_ = cmd.Process.Signal(syscall.SIGTERM)
			_ = cmd.Wait()
		}
		if nc != nil {
			nc.Close()
		}
		s.Shutdown()
	}
	exe, err := os.Executable()
	if err != nil {
		stop()
		return nil, nil, err
	}
	for range n {
		cmd := exec.Command(exe)
		if nice > 0 {
			cmd = exec.Command("nice", "-n", strconv.Itoa(nice), exe)
		}
		cmd.Env = append(os.Environ(), natsremote.EnvURL+"="+s.ClientURL(), natsremote.EnvPool+"=lab", natsremote.EnvWorkers+"=1",
			// One P, as a Subprocess worker has by default: the node
			// runs one task at a time, on the server's machine. /fast's
			// p99 beside the remote rows fell by about 15% with it
			// (the A/B is in docs/benchmarks.md).
			"GOMAXPROCS=1")
		if err := cmd.Start(); err != nil {
			stop()
			return nil, nil, err
		}
		nodes = append(nodes, cmd)
	}
	if nc, err = s.Connect(); err == nil {
		var t *natsremote.Transport
		// The n nodes share this host's name: let them all in.
		if t, err = natsremote.New(nc, natsremote.Options{Pool: "lab", MaxNodesPerName: max(n, natsremote.DefaultMaxNodesPerName)}); err == nil {
			o.Isolation, o.Transport = pool.Remote, t
			// Nodes joining and leaving would break into the lab's progress line.
			o.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
			p, err = pool.New(o)
		}
	}
	for end := time.Now().Add(30 * time.Second); err == nil && len(p.Nodes()) < n; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(end) {
			err = fmt.Errorf("lab server: %d of %d worker nodes joined within 30 s", len(p.Nodes()), n)
		}
	}
	if err != nil {
		stop()
		return nil, nil, err
	}
	return p, stop, nil
}
