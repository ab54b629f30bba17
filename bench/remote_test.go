package bench

import (
	"context"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/offloadgo/offload/pool"
)

// Remote pools, against the floor of a bare NATS request and against
// Subprocess workers, in one run:
//
//	go test ./bench -run '^$' -bench Remote -benchmem -count 6 | tee remote.txt
//	benchstat -col /transport remote.txt
//
// Every process is on this machine: the NATS server in the benchmark's,
// the nodes (and the floor's responder) in processes of their own, over
// TCP loopback.

// BenchmarkRemoteRoundTrip is one call of a trivial task at a time:
// transport=nats-request is a bare nc.Request of the same sizes to a
// responder process that answers at once (the floor), transport=remote a
// pool.Run through a Remote pool to a node process of one worker.
func BenchmarkRemoteRoundTrip(b *testing.B) {
	b.Run("transport=nats-request", func(b *testing.B) {
		s, nc := remoteServer(b)
		startProcess(b, envResponder+"="+s.ClientURL())
		request := make([]byte, floorRequestSize)
		for end := time.Now().Add(30 * time.Second); ; {
			if _, err := nc.Request(floorSubject, request, time.Second); err == nil {
				break
			} else if time.Now().After(end) {
				b.Fatal(err)
			}
		}
		b.ReportAllocs()
		var samples []time.Duration
		for b.Loop() {
			start := time.Now()
			if _, err := nc.Request(floorSubject, request, 10*time.Second); err != nil {
				b.Fatal(err)
			}
			samples = append(samples, time.Since(start))
		}
		reportQuantiles(b, samples, "round-trip")
	})
	b.Run("transport=remote", func(b *testing.B) {
		s, nc := remoteServer(b)
		roundTrips(b, startNodes(b, s, nc, "bench-round-trip", 1, 1, 1))
	})
}

// BenchmarkRemoteThroughput is Run from 8 goroutines: on a Subprocess pool
// of 2 workers, and on a Remote pool with 2 node processes of 1 worker
// each (the same 2 slots) and of 4 workers each (more calls in flight to
// cover the network's round trip).
func BenchmarkRemoteThroughput(b *testing.B) {
	ctx := context.Background()
	run := func(b *testing.B, p *pool.Pool) {
		warmUp(b, p)
		b.ReportAllocs()
		b.SetParallelism(max(1, 8/runtime.GOMAXPROCS(0)))
		b.RunParallel(func(pb *testing.PB) {
			for i := 0; pb.Next(); i++ {
				if _, err := pool.Run(ctx, p, trivial, i); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	b.Run("transport=subprocess/slots=2", func(b *testing.B) {
		run(b, newIsolated(b, pool.Subprocess, pool.Options{Workers: 2, MinWorkers: 2, MaxQueue: pool.Unbounded}))
	})
	for _, perNode := range []int{1, 4} {
		b.Run("transport=remote/slots="+strconv.Itoa(2*perNode), func(b *testing.B) {
			s, nc := remoteServer(b)
			run(b, startNodes(b, s, nc, "bench-throughput", 2, perNode, 2*perNode))
		})
	}
}
