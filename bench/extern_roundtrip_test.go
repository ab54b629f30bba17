//go:build unix

package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/offloadgo/offload/pool"
)

// BenchmarkExternRoundTrip is one trivial call ("echo": {Text, N} back as
// it came) at a time to a program's worker, four ways, for Python and
// Node:
//
//   - bare: the calls' frames written and read by a plain Go loop
//     (bareWorker), no pool, to the same test worker and SDK loop;
//   - pool: pool.Run on a Subprocess pool of that worker, Workers 1;
//   - spawn: the program started per call with a one-line script that
//     reads the input's JSON on stdin and writes the output's on stdout;
//   - spawn-sdk: the test worker started per call, one call through its
//     SDK (bare), and closed.
//
// self-cpu-ns is the CPU time of this process (not its children) per
// call: what the pool itself costs, less sensitive than the wall time to
// a busy machine's scheduling.
//
// Targets (issue 37): pool ≤ 1.5× bare, and spawn ≥ 100× pool.
//
// The pool hands each call from the caller's goroutine to its worker's
// and back; bare runs it on one goroutine. A run with -cpu 1 shows the
// pool without a second processor, to which the runtime hands a readied
// goroutine by waking a thread.
//
//	go test ./bench -run '^$' -bench 'ExternRoundTrip' -benchmem -count 6 | tee rt.txt
//	benchstat -col /way rt.txt
func BenchmarkExternRoundTrip(b *testing.B) {
	for _, l := range languages {
		b.Run("lang="+l.Name, func(b *testing.B) {
			for _, way := range []string{"bare", "pool", "spawn", "spawn-sdk"} {
				b.Run("way="+way, func(b *testing.B) {
					echo := echoWay(b, l, way)
					for range 3 { // warm: the first calls of a program are slower (imports, JIT)
						checkEcho(b, echo, 0)
					}
					b.ReportAllocs()
					before := selfCPU(b)
					i := 0
					for ; b.Loop(); i++ {
						checkEcho(b, echo, i)
					}
					b.ReportMetric(float64(selfCPU(b)-before)/float64(i), "self-cpu-ns/op")
				})
			}
		})
	}
}

// selfCPU is this process's user and system CPU time so far.
func selfCPU(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// echoCall runs one "echo" on in.
type echoCall func(in echoIO) (echoIO, error)

// echoWay returns way's echo (BenchmarkExternRoundTrip) for l's program;
// what it starts stops with tb.
func echoWay(tb testing.TB, l language, way string) echoCall {
	tb.Helper()
	command := l.Command(tb, l.Worker)
	switch way {
	case "bare":
		w, err := startBare(command)
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() {
			if err := w.close(); err != nil {
				tb.Error(err)
			}
		})
		return func(in echoIO) (out echoIO, err error) {
			_, err = w.call("echo", in, "", nil, &out)
			return out, err
		}
	case "pool":
		p := newProgramPool(tb, command, pool.Options{})
		return func(in echoIO) (echoIO, error) { return pool.Run(context.Background(), p, xEcho, in) }
	case "spawn":
		return func(in echoIO) (echoIO, error) { return spawnEcho(l, command[0], in) }
	case "spawn-sdk":
		return func(in echoIO) (out echoIO, err error) {
			w, err := startBare(command)
			if err != nil {
				return out, err
			}
			_, err = w.call("echo", in, "", nil, &out)
			if cerr := w.close(); err == nil {
				err = cerr
			}
			return out, err
		}
	}
	tb.Fatalf("no way %q", way)
	return nil
}

// spawnEcho starts program with l's one-line echo script, writes in to
// its stdin and reads the output from its stdout.
func spawnEcho(l language, program string, in echoIO) (out echoIO, err error) {
	js, err := json.Marshal(in)
	if err != nil {
		return out, err
	}
	cmd := exec.Command(program, l.evalFlag, l.echoScript)
	cmd.Stdin = bytes.NewReader(js)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	got, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("%s %s: %w: %s", program, l.evalFlag, err, stderr.Bytes())
	}
	return out, json.Unmarshal(got, &out)
}

// checkEcho fails tb unless echo returns its input, with N = i.
func checkEcho(tb testing.TB, echo echoCall, i int) {
	in := echoIO{Text: "hello", N: i}
	out, err := echo(in)
	if err != nil {
		tb.Fatal(err)
	}
	if out != in {
		tb.Fatalf("echo of %+v returned %+v", in, out)
	}
}
