package bench

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nuid"

	"github.com/offloadgo/offload/natsjobs"
)

// jobsRate is the pace of BenchmarkJobsEnqueueToDone: a job every 2 ms,
// 500 jobs/s.
const jobsRate = 2 * time.Millisecond

// BenchmarkJobsEnqueueToDone is the time from enqueuing a trivial job to
// hearing that it is done, at 500 jobs/s, two ways: way=natsjobs is
// Enqueue then Wait's return, the job run by Serve on a 2-worker
// InProcess pool; way=bare a JetStream publish, then the news that a
// consumer of the stream got the message and its ack was confirmed. The
// metrics are the p50 and p99 of that time.
//
//	go test ./bench -run '^$' -bench JobsEnqueueToDone -count 6 | tee latency.txt
//	benchstat -col /way latency.txt
func BenchmarkJobsEnqueueToDone(b *testing.B) {
	ctx := context.Background()
	b.Run("way=natsjobs", func(b *testing.B) {
		q := servedQueue(b, 2)
		atPace(b, func() error {
			id, err := natsjobs.Enqueue(ctx, q, jobDouble, jobInputValue)
			if err == nil {
				_, err = natsjobs.Wait(ctx, q, jobDouble, id)
			}
			return err
		})
	})
	b.Run("way=bare", func(b *testing.B) {
		js, s := bareWorkStream(b, jobsServer(b))
		c, err := s.CreateConsumer(ctx, jetstream.ConsumerConfig{Durable: "w", AckPolicy: jetstream.AckExplicitPolicy})
		if err != nil {
			b.Fatal(err)
		}
		var mu sync.Mutex
		done := map[string]chan struct{}{} // by subject
		consuming, err := c.Consume(func(m jetstream.Msg) {
			if m.DoubleAck(ctx) != nil {
				return // redelivered after AckWait: the benchmark fails by its time
			}
			mu.Lock()
			close(done[m.Subject()])
			delete(done, m.Subject())
			mu.Unlock()
		})
		if err != nil {
			b.Fatal(err)
		}
		defer consuming.Stop()
		atPace(b, func() error {
			subject, heard := "bare."+nuid.Next(), make(chan struct{})
			mu.Lock()
			done[subject] = heard
			mu.Unlock()
			if _, err := js.Publish(ctx, subject, bareBody); err != nil {
				return err
			}
			<-heard
			return nil
		})
	})
}

// atPace starts b.N calls of op, one every jobsRate, each on a goroutine
// of its own, and reports the quantiles of their times.
func atPace(b *testing.B, op func() error) {
	tick := time.NewTicker(jobsRate)
	defer tick.Stop()
	type result struct {
		took time.Duration
		err  error
	}
	results := make(chan result, b.N)
	b.ResetTimer()
	for range b.N {
		<-tick.C
		go func() {
			start := time.Now()
			err := op()
			results <- result{time.Since(start), err}
		}()
	}
	samples := make([]time.Duration, 0, b.N)
	for range b.N {
		r := <-results
		if r.err != nil {
			b.Fatal(r.err)
		}
		samples = append(samples, r.took)
	}
	b.StopTimer()
	reportQuantiles(b, samples, "done")
}
