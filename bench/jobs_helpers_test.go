package bench

import (
	"context"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/offloadgo/offload/natsjobs"
	"github.com/offloadgo/offload/natsremote/embedded"
	"github.com/offloadgo/offload/pool"
)

// The natsjobs benchmarks (jobs_*_test.go) run each way on a server of
// its own, embedded in the benchmark's process with JetStream on a
// temporary store directory, and reached in-process: way=natsjobs goes
// through the package, way=bare does the same JetStream work by hand.

// jobInput is a small job's input; bareBody is its encoding (msgpack,
// fields by name), the bare ways' message body.
type jobInput struct{ N int }

var (
	jobInputValue = jobInput{N: 12345}
	bareBody      = []byte{0x81, 0xa1, 'N', 0xcd, 0x30, 0x39}
)

// jobDouble is the trivial task of the jobs benchmarks.
var jobDouble = pool.Register("bench.jobs.double", func(_ context.Context, in jobInput) (int, error) {
	return 2 * in.N, nil
})

// jobsServer starts a server with JetStream and connects to it; both end
// with the benchmark.
func jobsServer(b *testing.B) *nats.Conn {
	b.Helper()
	s, err := embedded.Start(embedded.Options{StoreDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(s.Shutdown)
	nc, err := s.Connect()
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(nc.Close)
	return nc
}

// jobsQueue opens the queue "bench" on a server of its own; both end with
// the benchmark.
func jobsQueue(b *testing.B) *natsjobs.Queue {
	b.Helper()
	q, err := natsjobs.Open(context.Background(), jobsServer(b), natsjobs.Options{Name: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = q.Close() })
	return q
}

// servedQueue opens the queue "bench" on a server of its own, and serves
// it with natsjobs.Serve on an InProcess pool of workers workers until the
// benchmark ends; Serve's error, if any, fails the benchmark.
func servedQueue(b *testing.B, workers int) *natsjobs.Queue {
	b.Helper()
	q := jobsQueue(b)
	p := newIsolated(b, pool.InProcess, pool.Options{Workers: workers})
	serveCtx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- natsjobs.Serve(serveCtx, q, p, natsjobs.ServeOptions{}) }()
	b.Cleanup(func() {
		stop()
		if err := <-served; err != nil {
			b.Error(err)
		}
	})
	return q
}

// bareWorkStream is a stream like a queue's work stream: subjects
// bare.<token>, work-queue retention, on file.
func bareWorkStream(b *testing.B, nc *nats.Conn) (jetstream.JetStream, jetstream.Stream) {
	b.Helper()
	js, err := jetstream.New(nc)
	if err != nil {
		b.Fatal(err)
	}
	s, err := js.CreateStream(context.Background(), jetstream.StreamConfig{Name: "BARE", Subjects: []string{"bare.*"},
		Retention: jetstream.WorkQueuePolicy, Storage: jetstream.FileStorage})
	if err != nil {
		b.Fatal(err)
	}
	return js, s
}
