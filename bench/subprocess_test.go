package bench

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/offloadgo/offload/bench/internal/benchpool"
	"github.com/offloadgo/offload/internal/testkit"
	"github.com/offloadgo/offload/pool"
)

// Subprocess workers beside in-process ones, in one run:
//
//	go test ./bench -run '^$' -bench 'Subprocess' -benchmem -count 6 | tee sub.txt
//	benchstat -col /isolation sub.txt

var (
	benchPID = pool.Register("bench.pid", func(context.Context, struct{}) (int, error) {
		return os.Getpid(), nil
	})
	// benchHog allocates and touches mib MiB, says so on stdout (which the
	// benchmark's logger watches for), then spins without looking at ctx.
	benchHog = pool.Register("bench.hog", func(_ context.Context, mib int) (int, error) {
		held := make([]byte, mib<<20+1)
		for i := 0; i < len(held); i += 4096 {
			held[i] = 1
		}
		fmt.Println("bench.hog running")
		for {
			held[0]++
		}
	})
)

var isolations = []pool.Isolation{pool.InProcess, pool.Subprocess}

func newIsolated(b *testing.B, iso pool.Isolation, o pool.Options) *pool.Pool {
	b.Helper()
	o.Isolation = iso
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Workers == 0 {
		o.Workers = workers
	}
	return benchpool.New(b, o)
}

// BenchmarkSubprocessRoundTrip is one Run of a trivial task at a time.
func BenchmarkSubprocessRoundTrip(b *testing.B) {
	for _, iso := range isolations {
		b.Run("isolation="+iso.String(), func(b *testing.B) {
			roundTrips(b, newIsolated(b, iso, pool.Options{MinWorkers: workers}))
		})
	}
}

// roundTrips times one caller's Run of the trivial task on a warm p, call
// after call, and reports the quantiles beside the mean.
func roundTrips(b *testing.B, p *pool.Pool) {
	ctx := context.Background()
	warmUp(b, p)
	b.ReportAllocs()
	var samples []time.Duration
	for i := 0; b.Loop(); i++ {
		start := time.Now()
		if _, err := pool.Run(ctx, p, trivial, i); err != nil {
			b.Fatal(err)
		}
		samples = append(samples, time.Since(start))
	}
	reportQuantiles(b, samples, "round-trip")
}

// BenchmarkSubprocessThroughput is Run from GOMAXPROCS goroutines on 2
// workers.
func BenchmarkSubprocessThroughput(b *testing.B) {
	ctx := context.Background()
	for _, iso := range isolations {
		b.Run("isolation="+iso.String(), func(b *testing.B) {
			p := newIsolated(b, iso, pool.Options{MinWorkers: workers, MaxQueue: pool.Unbounded})
			warmUp(b, p)
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for i := 0; pb.Next(); i++ {
					if _, err := pool.Run(ctx, p, trivial, i); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

func warmUp(b *testing.B, p *pool.Pool) {
	for i := range 2 * workers {
		if _, err := pool.Run(context.Background(), p, trivial, i); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSubprocessFirstResult is the time from New with MinWorkers 1 to
// the first result; the pool's shutdown is outside the timing.
func BenchmarkSubprocessFirstResult(b *testing.B) {
	ctx := context.Background()
	for _, iso := range isolations {
		b.Run("isolation="+iso.String(), func(b *testing.B) {
			var samples []time.Duration
			for b.Loop() {
				start := time.Now()
				p, err := pool.New(pool.Options{Workers: 1, MinWorkers: 1, Isolation: iso,
					Logger: slog.New(slog.DiscardHandler)})
				if err != nil {
					b.Fatal(err)
				}
				_, err = pool.Run(ctx, p, trivial, 1)
				samples = append(samples, time.Since(start))
				if err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				_ = p.Shutdown(ctx)
				b.StartTimer()
			}
			reportQuantiles(b, samples, "first-result")
		})
	}
}

// BenchmarkSubprocessIdleRSS reports an idle worker process's resident
// memory after it has served a task, MiB-rss, and its two parts:
// MiB-anon, the worker's own (heap, stacks, the runtime's structures),
// and MiB-file, pages of the binary and its libraries, which it shares
// with the pool's process and every other worker (the larger the binary,
// the more of it a worker maps: this test binary links NATS and
// OpenTelemetry).
func BenchmarkSubprocessIdleRSS(b *testing.B) {
	testkit.SkipOffLinux(b, "reads the worker's RSS in /proc/PID/status")
	ctx := context.Background()
	var samples []resident
	for b.Loop() {
		p := newIsolated(b, pool.Subprocess, pool.Options{Workers: 1, MinWorkers: 1})
		pid, err := pool.Run(ctx, p, benchPID, struct{}{})
		if err != nil {
			b.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond) // idle
		status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
		if err != nil {
			b.Fatal(err)
		}
		m, err := parseResident(string(status))
		if err != nil {
			b.Fatal(err)
		}
		samples = append(samples, m)
		b.StopTimer()
		_ = p.Shutdown(ctx)
		b.StartTimer()
	}
	reportResident(b, samples)
}

// resident is a process's resident memory in bytes: in all, anonymous,
// and file-backed.
type resident struct{ total, anon, file int64 }

// parseResident reads VmRSS, RssAnon and RssFile from the text of
// /proc/PID/status.
func parseResident(status string) (resident, error) {
	var r resident
	for line := range strings.Lines(status) {
		var kb int64
		switch {
		case scanKB(line, "VmRSS: %d kB", &kb):
			r.total = kb << 10
		case scanKB(line, "RssAnon: %d kB", &kb):
			r.anon = kb << 10
		case scanKB(line, "RssFile: %d kB", &kb):
			r.file = kb << 10
		}
	}
	if r.total == 0 {
		return r, errors.New("no VmRSS")
	}
	return r, nil
}

func scanKB(line, format string, kb *int64) bool {
	_, err := fmt.Sscanf(line, format, kb)
	return err == nil
}

// reportResident reports the medians of samples as MiB-rss, MiB-anon
// and MiB-file.
func reportResident(b *testing.B, samples []resident) {
	for _, m := range []struct {
		unit string
		of   func(resident) int64
	}{
		{"MiB-rss", func(r resident) int64 { return r.total }},
		{"MiB-anon", func(r resident) int64 { return r.anon }},
		{"MiB-file", func(r resident) int64 { return r.file }},
	} {
		values := make([]int64, len(samples))
		for i, r := range samples {
			values[i] = m.of(r)
		}
		slices.Sort(values)
		b.ReportMetric(float64(values[len(values)/2])/(1<<20), m.unit)
	}
}

// BenchmarkSubprocessCancel cancels a running task that ignores its ctx,
// in a worker holding heap=N MiB: cancel-to-return is from cancel to Run
// returning ErrTerminated, replacement-served from cancel to the next
// task's result (served by the replacement worker).
func BenchmarkSubprocessCancel(b *testing.B) {
	for _, mib := range []int{0, 256} {
		b.Run(fmt.Sprintf("heap=%dMiB", mib), func(b *testing.B) {
			running := make(chan struct{}, 1)
			p := newIsolated(b, pool.Subprocess, pool.Options{Workers: 1, MinWorkers: 1,
				Logger: slog.New(&signalHandler{match: "bench.hog running", ch: running})})
			warmUp(b, p)
			var toReturn, toServed []time.Duration
			for b.Loop() {
				ctx, cancel := context.WithCancel(context.Background())
				f, err := pool.Submit(ctx, p, benchHog, mib)
				if err != nil {
					b.Fatal(err)
				}
				<-running
				start := time.Now()
				cancel()
				if _, err := f.Wait(); !errors.Is(err, pool.ErrTerminated) {
					b.Fatalf("got %v, want ErrTerminated", err)
				}
				toReturn = append(toReturn, time.Since(start))
				if _, err := pool.Run(context.Background(), p, trivial, 1); err != nil {
					b.Fatal(err)
				}
				toServed = append(toServed, time.Since(start))
			}
			reportQuantiles(b, toReturn, "cancel-to-return")
			reportQuantiles(b, toServed, "replacement-served")
		})
	}
}

// signalHandler is a slog handler that signals ch when a record's message
// is match, and drops every record.
type signalHandler struct {
	match string
	ch    chan struct{}
}

func (h *signalHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *signalHandler) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *signalHandler) WithGroup(string) slog.Handler            { return h }
func (h *signalHandler) Handle(_ context.Context, r slog.Record) error {
	if r.Message == h.match {
		select {
		case h.ch <- struct{}{}:
		default:
		}
	}
	return nil
}

// reportQuantiles reports the median and p99 of samples as name-p50-ns and
// name-p99-ns.
func reportQuantiles(b *testing.B, samples []time.Duration, name string) {
	if len(samples) == 0 {
		return
	}
	slices.Sort(samples)
	b.ReportMetric(float64(samples[len(samples)/2]), name+"-p50-ns")
	b.ReportMetric(float64(samples[(len(samples)*99)/100]), name+"-p99-ns")
}
