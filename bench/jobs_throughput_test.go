package bench

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/offloadgo/offload/natsjobs"
	"github.com/offloadgo/offload/pool"
)

// BenchmarkJobsThroughput is b.N queued trivial jobs run to their end,
// two ways: way=natsjobs is Serve on a 2-worker InProcess pool, timed
// until the work stream is empty (a job leaves it when acked, after its
// outcome is written); way=bare a loop that fetches 2 messages at a time
// and acks each, waiting for the server to confirm. cpu-ns/op is the
// CPU time of the process (server, client and pool) per job: on a busy
// machine it shows the work that wall time blurs.
//
//	go test ./bench -run '^$' -bench JobsThroughput -benchmem -count 6 | tee throughput.txt
//	benchstat -col /way throughput.txt
func BenchmarkJobsThroughput(b *testing.B) {
	ctx := context.Background()
	b.Run("way=natsjobs", func(b *testing.B) {
		nc := jobsServer(b)
		q, err := natsjobs.Open(ctx, nc, natsjobs.Options{Name: "bench"})
		if err != nil {
			b.Fatal(err)
		}
		defer q.Close()
		p := newIsolated(b, pool.InProcess, pool.Options{Workers: 2})
		for range b.N {
			if _, err := natsjobs.Enqueue(ctx, q, jobDouble, jobInputValue); err != nil {
				b.Fatal(err)
			}
		}
		js, err := jetstream.New(nc)
		if err != nil {
			b.Fatal(err)
		}
		work, err := js.Stream(ctx, "OFFLOAD_JOBS_bench")
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		b.ResetTimer()
		cpu := cpuFrom(b)
		serveCtx, stop := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- natsjobs.Serve(serveCtx, q, p, natsjobs.ServeOptions{}) }()
		for {
			info, err := work.Info(ctx)
			if err != nil {
				b.Fatal(err)
			}
			if info.State.Msgs == 0 {
				break
			}
			time.Sleep(time.Millisecond)
		}
		b.StopTimer()
		cpu.report(b)
		stop()
		if err := <-done; err != nil {
			b.Fatal(err)
		}
	})
	b.Run("way=bare", func(b *testing.B) {
		js, s := bareWorkStream(b, jobsServer(b))
		for range b.N {
			if _, err := js.Publish(ctx, "bare.x", bareBody); err != nil {
				b.Fatal(err)
			}
		}
		c, err := s.CreateConsumer(ctx, jetstream.ConsumerConfig{Durable: "w", AckPolicy: jetstream.AckExplicitPolicy})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		b.ResetTimer()
		defer cpuFrom(b).report(b)
		for got := 0; got < b.N; {
			batch, err := c.Fetch(min(2, b.N-got), jetstream.FetchMaxWait(time.Second))
			if err != nil {
				b.Fatal(err)
			}
			for m := range batch.Messages() {
				if err := m.DoubleAck(ctx); err != nil {
					b.Fatal(err)
				}
				got++
			}
		}
	})
}
