package natsjobs_test

import (
	"context"
	"sort"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nuid"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/natsjobs"
	"github.com/offloadgo/offload/pool"
)

// benchInput is about the size of a small job's input.
var benchInput = Num{N: 12345}

// BenchmarkEnqueue compares Enqueue, one publisher waiting for each
// store, with a bare JetStream publish of the same bytes to a stream
// like the work stream.
func BenchmarkEnqueue(b *testing.B) {
	b.Run("natsjobs", func(b *testing.B) {
		_, nc := startJetStreamB(b)
		q, err := natsjobs.Open(context.Background(), nc, natsjobs.Options{Name: "bench"})
		require.NoError(b, err)
		defer q.Close()
		ctx := context.Background()
		for b.Loop() {
			if _, err := natsjobs.Enqueue(ctx, q, double, benchInput); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("jetstream", func(b *testing.B) {
		js, body := bareStream(b)
		ctx := context.Background()
		for b.Loop() {
			if _, err := js.Publish(ctx, "bare.x", body); err != nil {
				b.Fatal(err)
			}
		}
	})
	// As Enqueue stores a job: a subject and a message id per job.
	b.Run("jetstream-as-jobs", func(b *testing.B) {
		js, body := bareStream(b)
		ctx := context.Background()
		for b.Loop() {
			id := nuid.Next()
			msg := &nats.Msg{Subject: "bare." + id, Data: body, Header: nats.Header{}}
			msg.Header.Set("Offload-Task", "natsjobs.double")
			if _, err := js.PublishMsg(ctx, msg, jetstream.WithMsgID(id)); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkThroughput runs trivial jobs through a 2-worker InProcess
// pool, against a bare JetStream fetch-and-ack loop of as many messages.
func BenchmarkThroughput(b *testing.B) {
	b.Run("natsjobs", func(b *testing.B) {
		_, nc := startJetStreamB(b)
		ctx := context.Background()
		q, err := natsjobs.Open(ctx, nc, natsjobs.Options{Name: "bench"})
		require.NoError(b, err)
		defer q.Close()
		p, err := pool.New(pool.Options{Workers: 2})
		require.NoError(b, err)
		defer p.Close()
		for range b.N {
			_, err = natsjobs.Enqueue(ctx, q, double, benchInput)
			require.NoError(b, err)
		}
		js, err := jetstream.New(nc)
		require.NoError(b, err)
		st, err := js.Stream(ctx, "OFFLOAD_JOBS_bench")
		require.NoError(b, err)
		b.ResetTimer()
		serveCtx, stop := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- natsjobs.Serve(serveCtx, q, p, natsjobs.ServeOptions{}) }()
		// Every job is done once the work stream is empty: a job's
		// outcome is written before its ack.
		for {
			info, err := st.Info(ctx)
			require.NoError(b, err)
			if info.State.Msgs == 0 {
				break
			}
			time.Sleep(time.Millisecond)
		}
		b.StopTimer()
		stop()
		require.NoError(b, <-done)
	})
	b.Run("jetstream", func(b *testing.B) {
		_, nc := startJetStreamB(b)
		js, err := jetstream.New(nc)
		require.NoError(b, err)
		ctx := context.Background()
		s, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "BARE", Subjects: []string{"bare.*"},
			Retention: jetstream.WorkQueuePolicy, Storage: jetstream.FileStorage})
		require.NoError(b, err)
		for range b.N {
			_, err := js.Publish(ctx, "bare.x", []byte{0x81, 0xa1, 'N', 0xcd, 0x30, 0x39})
			require.NoError(b, err)
		}
		c, err := s.CreateConsumer(ctx, jetstream.ConsumerConfig{Durable: "w", AckPolicy: jetstream.AckExplicitPolicy})
		require.NoError(b, err)
		b.ResetTimer()
		for got := 0; got < b.N; {
			batch, err := c.Fetch(2, jetstream.FetchMaxWait(time.Second))
			require.NoError(b, err)
			for m := range batch.Messages() {
				require.NoError(b, m.DoubleAck(ctx))
				got++
			}
		}
	})
}

// BenchmarkEnqueueToWait is the time from Enqueue to Wait's return for a
// trivial job, at about 500 jobs/s: its p50 and p99 are reported.
func BenchmarkEnqueueToWait(b *testing.B) {
	_, nc := startJetStreamB(b)
	ctx := context.Background()
	q, err := natsjobs.Open(ctx, nc, natsjobs.Options{Name: "bench"})
	require.NoError(b, err)
	defer q.Close()
	p, err := pool.New(pool.Options{Workers: 2})
	require.NoError(b, err)
	defer p.Close()
	serveCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- natsjobs.Serve(serveCtx, q, p, natsjobs.ServeOptions{}) }()
	defer func() { stop(); require.NoError(b, <-done) }()
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	latencies := make(chan time.Duration, b.N)
	errs := make(chan error, b.N)
	for range b.N {
		<-tick.C
		go func() {
			start := time.Now()
			id, err := natsjobs.Enqueue(ctx, q, double, benchInput)
			if err == nil {
				_, err = natsjobs.Wait(ctx, q, double, id)
			}
			errs <- err
			latencies <- time.Since(start)
		}()
	}
	all := make([]time.Duration, 0, b.N)
	for range b.N {
		require.NoError(b, <-errs)
		all = append(all, <-latencies)
	}
	sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
	b.ReportMetric(float64(all[len(all)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(all[len(all)*99/100].Microseconds())/1000, "p99-ms")
}

func startJetStreamB(b *testing.B) (*natsServer, *nats.Conn) {
	b.Helper()
	s, err := embeddedStart(b.TempDir())
	require.NoError(b, err)
	b.Cleanup(s.Shutdown)
	nc, err := s.Connect()
	require.NoError(b, err)
	b.Cleanup(nc.Close)
	return s, nc
}

// bareStream is a JetStream with a work stream "BARE" on bare.*, and a
// body the size of benchInput's encoding, for the bare rows.
func bareStream(b *testing.B) (jetstream.JetStream, []byte) {
	_, nc := startJetStreamB(b)
	js, err := jetstream.New(nc)
	require.NoError(b, err)
	_, err = js.CreateStream(context.Background(), jetstream.StreamConfig{Name: "BARE", Subjects: []string{"bare.*"},
		Retention: jetstream.WorkQueuePolicy, Storage: jetstream.FileStorage})
	require.NoError(b, err)
	return js, []byte{0x81, 0xa1, 'N', 0xcd, 0x30, 0x39}
}
