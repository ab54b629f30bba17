package bench

import (
	"context"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nuid"

	"github.com/offloadgo/offload/natsjobs"
)

// BenchmarkJobsEnqueue is one publisher waiting for each store, three
// ways: way=natsjobs is Enqueue of a small input; way=bare a JetStream
// publish of the same body to one subject; way=bare-as-job the publish
// Enqueue makes, by hand: a subject per job, its id as Nats-Msg-Id, the
// task's name as a header. cpu-ns/op is the process's CPU time (server
// and client) per publish.
//
//	go test ./bench -run '^$' -bench JobsEnqueue -benchmem -count 6 | tee enqueue.txt
//	benchstat -col /way enqueue.txt
func BenchmarkJobsEnqueue(b *testing.B) {
	ctx := context.Background()
	b.Run("way=natsjobs", func(b *testing.B) {
		q := jobsQueue(b)
		b.ReportAllocs()
		defer cpuFrom(b).report(b)
		for b.Loop() {
			if _, err := natsjobs.Enqueue(ctx, q, jobDouble, jobInputValue); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("way=bare", func(b *testing.B) {
		js, _ := bareWorkStream(b, jobsServer(b))
		b.ReportAllocs()
		defer cpuFrom(b).report(b)
		for b.Loop() {
			if _, err := js.Publish(ctx, "bare.x", bareBody); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("way=bare-as-job", func(b *testing.B) {
		js, _ := bareWorkStream(b, jobsServer(b))
		b.ReportAllocs()
		defer cpuFrom(b).report(b)
		for b.Loop() {
			id := nuid.Next()
			msg := &nats.Msg{Subject: "bare." + id, Data: bareBody, Header: nats.Header{}}
			msg.Header.Set("Offload-Task", jobDouble.Name())
			if _, err := js.PublishMsg(ctx, msg, jetstream.WithMsgID(id)); err != nil {
				b.Fatal(err)
			}
		}
	})
}
