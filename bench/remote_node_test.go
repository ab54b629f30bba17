package bench

import (
	"context"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/offloadgo/offload/natsremote"
	"github.com/offloadgo/offload/natsremote/embedded"
	"github.com/offloadgo/offload/pool"
)

// The processes of the Remote benchmarks: the benchmark binary itself,
// re-executed as a worker node (natsremote.Main serves, as OFFLOAD_NATS_URL
// says) or as the floor's bare responder (floorResponderMain).

// envResponder makes a re-executed benchmark binary the responder of the
// nc.Request floor: it answers on floorSubject at the URL it names.
const envResponder = "BENCH_NATS_RESPONDER"

// floorSubject is where the floor's responder listens.
const floorSubject = "bench.floor"

// floorResponderMain serves as the floor's responder, if this process was
// started as one, until SIGTERM; it returns at once otherwise. Each
// request gets an answer of floorReplySize bytes, the size of a Remote
// answer to the trivial task.
func floorResponderMain() {
	url := os.Getenv(envResponder)
	if url == "" {
		return
	}
	nc, err := nats.Connect(url)
	if err != nil {
		os.Exit(2)
	}
	reply := make([]byte, floorReplySize)
	if _, err := nc.Subscribe(floorSubject, func(m *nats.Msg) { _ = m.Respond(reply) }); err != nil {
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	<-ctx.Done()
	stop()
	nc.Close()
	os.Exit(0)
}

// The floor's message sizes: those of a Remote call of bench.trivial and
// its answer (a 26-byte header; the call's head: heartbeat, fingerprint
// and start bound, an empty trace context and the task's name; a small
// msgpack int).
const (
	floorRequestSize = 26 + 24 + 1 + 1 + len("bench.trivial") + 2
	floorReplySize   = 26 + 2
)

// remoteServer starts an embedded NATS server listening on loopback for
// the benchmark, and a connection to it over TCP, as a submitter on
// another machine would have.
func remoteServer(b *testing.B) (*embedded.Server, *nats.Conn) {
	b.Helper()
	s, err := embedded.Start(embedded.Options{Listen: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(s.Shutdown)
	nc, err := nats.Connect(s.ClientURL())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(nc.Close)
	return s, nc
}

// startProcess starts the benchmark binary with env added, ended (SIGTERM,
// then reaped) when the benchmark ends.
func startProcess(b *testing.B, env ...string) {
	b.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$", "-test.bench=^$")
	cmd.Env = append(os.Environ(), env...) // its output is dropped: nodes log each join and leave
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
}

// startNodes starts n node processes of workers slots each, serving the
// pool name on s, and returns a Remote pool of poolWorkers that sees them.
func startNodes(b *testing.B, s *embedded.Server, nc *nats.Conn, name string, n, workers, poolWorkers int) *pool.Pool {
	b.Helper()
	for range n {
		startProcess(b, natsremote.EnvURL+"="+s.ClientURL(), natsremote.EnvPool+"="+name,
			natsremote.EnvWorkers+"="+strconv.Itoa(workers))
	}
	t, err := natsremote.New(nc, natsremote.Options{Pool: name})
	if err != nil {
		b.Fatal(err)
	}
	p := newIsolated(b, pool.Remote, pool.Options{Workers: poolWorkers, MaxQueue: pool.Unbounded, Transport: t})
	for end := time.Now().Add(30 * time.Second); len(p.Nodes()) < n; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(end) {
			b.Fatalf("%d of %d nodes joined", len(p.Nodes()), n)
		}
	}
	return p
}
