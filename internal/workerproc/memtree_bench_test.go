//go:build linux

package workerproc

import (
	"fmt"
	"math"
	"strconv"
	"testing"
)

// BenchmarkTreeSample: one sample of a worker's tree (what watchMemory
// does every treePoll) with n idle children (sleep), by the children walk
// and by the /proc scan that stands in for it without CONFIG_PROC_CHILDREN,
// within the budget (their RSS is read) and past it (their Pss too).
// Reports ns per sample (ns/op) and per descendant.
func BenchmarkTreeSample(b *testing.B) {
	for _, scan := range []bool{false, true} {
		for _, n := range []int{0, 1, 16, 64} {
			for _, budget := range []int64{math.MaxInt64, 0} {
				name := fmt.Sprintf("scan=%v/descendants=%d/pss=%v", scan, n, budget == 0)
				b.Run(name, func(b *testing.B) { benchmarkTreeSample(b, scan, n, budget) })
			}
		}
	}
}

func benchmarkTreeSample(b *testing.B, scan bool, n int, budget int64) {
	p := startWorker(b, Spec{})
	for range n {
		got := roundTrip(b, p.Conn(), Frame{Kind: kindSpawn}) // sleep 30
		pid, err := strconv.Atoi(string(got.Body))
		if err != nil {
			b.Fatal(err)
		}
		watchProcess(b, pid)
	}
	s := newTreeSampler()
	s.scan = scan
	for b.Loop() {
		m, err := s.sample(p.PID(), budget)
		if err != nil || m.Descendants != n {
			b.Fatalf("sample: %+v, %v; want %d descendants", m, err, n)
		}
	}
	if n > 0 {
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/descendant")
	}
}

// BenchmarkMemoryReads: what one figure of a process costs: its RSS from
// statm (watchMemory's read of the worker every MemoryPoll) against its
// Pss from smaps_rollup, which walks the process's page tables, for an
// idle worker and for a process holding 256 MiB.
func BenchmarkMemoryReads(b *testing.B) {
	var logs logBuffer
	p := startWorker(b, Spec{Logger: logs.logger()})
	hog := startHog(b, p, &logs, "anon:256")
	for _, tc := range []struct {
		name string
		pid  int
		file string
	}{
		{"statm/worker", p.PID(), "statm"},
		{"smaps_rollup/worker", p.PID(), "smaps_rollup"},
		{"statm/256MiB", hog, "statm"},
		{"smaps_rollup/256MiB", hog, "smaps_rollup"},
	} {
		b.Run(tc.name, func(b *testing.B) {
			s := newTreeSampler()
			path := "/proc/" + strconv.Itoa(tc.pid) + "/" + tc.file
			for b.Loop() {
				if _, err := s.read(path); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
