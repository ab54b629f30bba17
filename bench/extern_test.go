package bench

import (
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/offloadgo/offload/bench/internal/benchpool"
	"github.com/offloadgo/offload/internal/programtest"
	"github.com/offloadgo/offload/internal/testkit"
	"github.com/offloadgo/offload/pool"
)

// Pools whose workers are programs of another language (pool.Extern,
// SubprocessOptions.Command), beside the same work done without a pool,
// in one run:
//
//	go test ./bench -run '^$' -bench 'Extern' -benchmem -count 6 | tee extern.txt
//	benchstat -col /way extern.txt
//
// python3 and node must be installed: these benchmarks, and the quick
// tests that check them, fail without them rather than skip.

type (
	// echoIO is the input and output of the test workers' "echo"
	// (sdk/testdata/worker.py and worker.mjs).
	echoIO = programtest.EchoIO
	// blobIO is the input and output of "blobecho" (testdata/extern),
	// whose Data travels as raw bytes both ways.
	blobIO struct {
		Data []byte `offload:"blob"`
	}
)

var (
	xEcho     = programtest.Echo
	xBlobEcho = pool.Extern[blobIO, blobIO]("blobecho")
)

// language is a program of another language: its test worker (which
// serves "echo"), the benchmarks' blob worker, and the flag and one-line
// script with which it echoes the JSON on its stdin to its stdout.
type language struct {
	testkit.Program
	blobWorker           string
	evalFlag, echoScript string
}

var languages = []language{
	{testkit.Programs[0], "testdata/extern/blobecho.py",
		"-c", `import json,sys; d=json.load(sys.stdin); json.dump({"Text": d["Text"], "N": d["N"]}, sys.stdout)`},
	{testkit.Programs[1], "testdata/extern/blobecho.mjs",
		"-e", `let s = ""; process.stdin.setEncoding("utf8").on("data", (c) => (s += c)).on("end", () => {
			const d = JSON.parse(s); process.stdout.write(JSON.stringify({ Text: d.Text, N: d.N })); });`},
}

// blobCommand is the command line of l's blob worker, in this module's
// testdata.
func (l language) blobCommand(tb testing.TB) []string {
	tb.Helper()
	abs, err := filepath.Abs(l.blobWorker)
	if err != nil {
		tb.Fatal(err)
	}
	return l.Command(tb, abs)
}

// newProgramPool returns a Subprocess pool of command's processes, which
// starts all its workers at New, closed with tb.
func newProgramPool(tb testing.TB, command []string, o pool.Options) *pool.Pool {
	tb.Helper()
	o.Isolation = pool.Subprocess
	o.Subprocess.Command = command
	if o.Workers == 0 {
		o.Workers = 1
	}
	o.MinWorkers = o.Workers
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return benchpool.New(tb, o) // skips where Subprocess pools don't run
}
