//go:build linux

package workerproc

import (
	"context"
	"io"
	"log/slog"
	"os"
	"slices"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// BenchmarkRoundTrip16B: a 16-byte frame to the worker and back through
// Conn (blocking system calls on both sides).
func BenchmarkRoundTrip16B(b *testing.B) {
	p := startWorker(b, Spec{})
	c := p.Conn()
	f := Frame{Kind: kindEcho, Body: make([]byte, 16)}
	var lat latencies
	b.ReportAllocs()
	for b.Loop() {
		start := time.Now()
		if err := c.WriteFrame(f); err != nil {
			b.Fatal(err)
		}
		if _, err := c.ReadFrame(); err != nil {
			b.Fatal(err)
		}
		lat.add(start)
	}
	lat.report(b)
}

// latencies collects per-operation times, to report the median and the
// tail of single round trips besides the mean that ns/op is.
type latencies []time.Duration

func (l *latencies) add(start time.Time) { *l = append(*l, time.Since(start)) }

func (l latencies) report(b *testing.B) {
	if len(l) == 0 {
		return
	}
	slices.Sort(l)
	b.ReportMetric(float64(l[len(l)/2].Nanoseconds()), "p50-ns")
	b.ReportMetric(float64(l[len(l)*99/100].Nanoseconds()), "p99-ns")
}

// BenchmarkRoundTrip16BPoller: the same round trip with the supervisor's
// pipes read and written through Go's poller (os.File on non-blocking
// descriptors) instead of poll and read on the calling thread: the
// alternative Conn does not take.
func BenchmarkRoundTrip16BPoller(b *testing.B) {
	p := startWorker(b, Spec{})
	file := func(fd int) *os.File {
		dup, err := unix.Dup(fd)
		if err != nil {
			b.Fatal(err)
		}
		unix.CloseOnExec(dup)
		return os.NewFile(uintptr(dup), "poller") // non-blocking: the poller takes it
	}
	rf, wf := file(p.Conn().rfd), file(p.Conn().wfd)
	defer rf.Close()
	defer wf.Close()
	out := make([]byte, HeaderSize+16)
	putHeader(out, &Frame{Kind: kindEcho, Body: make([]byte, 16)})
	in := make([]byte, len(out))
	var lat latencies
	b.ReportAllocs()
	for b.Loop() {
		start := time.Now()
		if _, err := wf.Write(out); err != nil {
			b.Fatal(err)
		}
		if _, err := io.ReadFull(rf, in); err != nil {
			b.Fatal(err)
		}
		lat.add(start)
	}
	lat.report(b)
}

// BenchmarkStartToHello: from Start to a worker that has said hello.
func BenchmarkStartToHello(b *testing.B) {
	requirePair(b)
	log := quietLogger(b)
	for b.Loop() {
		p := startOrFatal(b, log)
		b.StopTimer()
		p.Close()
		b.StartTimer()
	}
}

// BenchmarkIdleRSS reports the resident memory of a worker (the test
// binary) that has just said hello, as MiB/worker.
func BenchmarkIdleRSS(b *testing.B) {
	requirePair(b)
	log := quietLogger(b)
	var total int64
	n := 0
	for b.Loop() {
		p := startOrFatal(b, log)
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

// BenchmarkPipelined16B: 64 frames of 16 bytes in flight, written one
// WriteFrame each or in one WriteFrames batch; ns/op is per frame. The
// test worker answers each frame with its own write.
func BenchmarkPipelined16B(b *testing.B) {
	for _, batched := range []bool{false, true} {
		name := map[bool]string{false: "single", true: "batch"}[batched]
		b.Run(name, func(b *testing.B) {
			p := startWorker(b, Spec{})
			c := p.Conn()
			frames := make([]Frame, 64)
			for i := range frames {
				frames[i] = Frame{Kind: kindEcho, ID: uint64(i), Body: make([]byte, 16)}
			}
			b.ReportAllocs()
			for i := 0; i < b.N; i += len(frames) {
				errc := make(chan error, 1)
				go func() {
					if batched {
						errc <- c.WriteFrames(frames...)
						return
					}
					for _, f := range frames {
						if err := c.WriteFrame(f); err != nil {
							errc <- err
							return
						}
					}
					errc <- nil
				}()
				for range frames {
					if _, err := c.ReadFrame(); err != nil {
						b.Fatal(err)
					}
				}
				if err := <-errc; err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkRoundTrip1MiB: a 1 MiB frame to the worker and back.
func BenchmarkRoundTrip1MiB(b *testing.B) {
	p := startWorker(b, Spec{})
	c := p.Conn()
	f := Frame{Kind: kindEcho, Body: make([]byte, 1<<20)}
	b.SetBytes(2 << 20)
	for b.Loop() {
		if err := c.WriteFrame(f); err != nil {
			b.Fatal(err)
		}
		if _, err := c.ReadFrame(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkKillToDone256MiB: Kill to Done for a worker holding 256 MiB:
// the kernel's teardown grows with the heap, which is why nobody should
// wait for the reap.
func BenchmarkKillToDone256MiB(b *testing.B) {
	benchKillToDone(b, func(p *Process) {
		if err := p.Conn().WriteFrame(Frame{Kind: kindHold, Body: []byte("256")}); err != nil {
			b.Fatal(err)
		}
		if _, err := p.Conn().ReadFrame(); err != nil {
			b.Fatal(err)
		}
	})
}

// BenchmarkKillToDone: from Kill to Done closed (the reap, with the
// output drained and the Exit built), for an idle worker.
func BenchmarkKillToDone(b *testing.B) { benchKillToDone(b, func(*Process) {}) }

// benchKillToDone times Kill to Done of a fresh worker per op; ready
// prepares each worker before the timing starts.
func benchKillToDone(b *testing.B, ready func(*Process)) {
	requirePair(b)
	log := quietLogger(b)
	for b.Loop() {
		b.StopTimer()
		p := startOrFatal(b, log)
		ready(p)
		b.StartTimer()
		p.Kill()
		<-p.Done()
		b.StopTimer()
		p.Close()
		b.StartTimer()
	}
}

// startOrFatal starts a worker logging to log, or ends the benchmark.
func startOrFatal(b *testing.B, log *slog.Logger) *Process {
	p, err := Start(context.Background(), Spec{Logger: log})
	if err != nil {
		b.Fatal(err)
	}
	return p
}
