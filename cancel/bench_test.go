//go:build linux

package cancel

import (
	"context"
	"io"
	"net"
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// BenchmarkRoundTrip16B: a 16-byte frame to the worker and back through
// Conn (blocking system calls on both sides).
func BenchmarkRoundTrip16B(b *testing.B) {
	p := startWorker(b, Spec{})
	c := p.Conn()
	f := Frame{Kind: kindEcho, Body: make([]byte, 16)}
	b.ReportAllocs()
	for b.Loop() {
		if err := c.WriteFrame(f); err != nil {
			b.Fatal(err)
		}
		if _, err := c.ReadFrame(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRoundTrip16BPoller: the same round trip with the supervisor's
// end read and written through Go's network poller (net.FileConn) instead
// of blocking system calls: the alternative Conn does not take.
func BenchmarkRoundTrip16BPoller(b *testing.B) {
	p := startWorker(b, Spec{})
	fd, err := unix.Dup(p.Conn().fd)
	if err != nil {
		b.Fatal(err)
	}
	file := os.NewFile(uintptr(fd), "poller")
	nc, err := net.FileConn(file) // sets the shared socket non-blocking: Conn is unused from here
	file.Close()
	if err != nil {
		b.Fatal(err)
	}
	defer nc.Close()
	out := make([]byte, HeaderSize+16)
	putHeader(out, &Frame{Kind: kindEcho, Body: make([]byte, 16)})
	in := make([]byte, len(out))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := nc.Write(out); err != nil {
			b.Fatal(err)
		}
		if _, err := io.ReadFull(nc, in); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStartToHello: from Start to a worker that has said hello.
func BenchmarkStartToHello(b *testing.B) {
	log := quietLogger(b)
	for b.Loop() {
		p, err := Start(context.Background(), Spec{Logger: log})
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		p.Close()
		b.StartTimer()
	}
}

// BenchmarkIdleRSS reports the resident memory of a worker (the test
// binary) that has just said hello, as MiB/worker.
func BenchmarkIdleRSS(b *testing.B) {
	log := quietLogger(b)
	var total int64
	n := 0
	for b.Loop() {
		p, err := Start(context.Background(), Spec{Logger: log})
		if err != nil {
			b.Fatal(err)
		}
		rss, err := p.RSS()
		if err != nil {
			b.Fatal(err)
		}
		total += rss
		n++
		p.Close()
	}
	b.ReportMetric(float64(total)/float64(n)/(1<<20), "MiB/worker")
}

// BenchmarkKillToDone: from Kill to Done closed (the reap, with the
// output drained and the Exit built), for an idle worker.
func BenchmarkKillToDone(b *testing.B) {
	log := quietLogger(b)
	for b.Loop() {
		b.StopTimer()
		p, err := Start(context.Background(), Spec{Logger: log})
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		p.Kill()
		<-p.Done()
		b.StopTimer()
		p.Close()
		b.StartTimer()
	}
}
