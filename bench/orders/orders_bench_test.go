package orders

import (
	"context"
	"fmt"
	"log/slog"
	"testing"

	"github.com/offloadgo/offload/bench/internal/benchpool"
	"github.com/offloadgo/offload/internal/testkit"
	"github.com/offloadgo/offload/pool"
)

// The two tables of the reference page, in one run:
//
//	flock /tmp/offload-bench.lock go test ./bench/orders -run '^$' -bench . \
//	    -benchmem -count 6 -timeout 60m > orders.txt
//	benchstat -row /rows,/mode -col /isolation -filter .name:Orders orders.txt

// sizes are the page's row counts.
var sizes = []int{1_000, 50_000, 250_000}

var isolations = []pool.Isolation{pool.InProcess, pool.Subprocess}

// benchWorkers is the pool size of every pooled row.
const benchWorkers = 2

// maxPayload leaves room for the trap's 250,000 rows in msgpack.
const maxPayload = 256 << 20

// newPool returns a pool of benchWorkers warm workers, shut down when tb
// ends.
func newPool(tb testing.TB, iso pool.Isolation) *pool.Pool {
	tb.Helper()
	o := pool.Options{
		Workers:    benchWorkers,
		MinWorkers: benchWorkers,
		Isolation:  iso,
		Logger:     slog.New(slog.DiscardHandler),
	}
	if iso == pool.Subprocess {
		o.Subprocess.MaxPayload = maxPayload
	}
	return benchpool.New(tb, o)
}

// BenchmarkOrders is both tables: for each size, each mode and each
// isolation, the total time (ns/op), the caller's busy time, its process's
// CPU time, and for Subprocess the bytes that crossed to the worker and
// back (see the package doc for each definition).
func BenchmarkOrders(b *testing.B) {
	for _, rows := range sizes {
		for _, md := range modes {
			if !md.pooled {
				b.Run(fmt.Sprintf("rows=%d/mode=%s/isolation=none", rows, md.name), func(b *testing.B) {
					benchMode(b, md, rows, nil, false)
				})
				continue
			}
			for _, iso := range isolations {
				b.Run(fmt.Sprintf("rows=%d/mode=%s/isolation=%s", rows, md.name, iso), func(b *testing.B) {
					benchMode(b, md, rows, newPool(b, iso), iso == pool.Subprocess)
				})
			}
		}
	}
}

// benchMode runs md on rows rows, on p unless md stays on the caller;
// crossing says p's workers are processes whose I/O can be counted.
func benchMode(b *testing.B, md mode, rows int, p *pool.Pool, crossing bool) {
	data, err := ordersJSON(rows)
	if err != nil {
		b.Fatal(err)
	}
	e := &env{ctx: context.Background(), pool: p, data: data, m: &meter{}, untimed: func(f func()) { f() }}
	// One op before the clock starts: it checks the mode works at all, and
	// warms the workers, the heap and the arena.
	if err := checkedOp(md, e); err != nil {
		b.Fatal(err)
	}
	var before map[int]int64
	if crossing {
		testkit.SkipOffLinux(b, "reads the workers' I/O counts in /proc/PID/io")
		if before, err = workerIO(); err != nil {
			b.Fatal(err)
		}
	}
	e.m = &meter{}
	e.untimed = func(f func()) { b.StopTimer(); f(); b.StartTimer() }
	for b.Loop() {
		if err := checkedOp(md, e); err != nil {
			b.Fatal(err)
		}
	}
	if e.m.failed != nil {
		b.Fatal(e.m.failed)
	}
	busy, cpu := e.m.perOp()
	b.ReportMetric(float64(busy.Nanoseconds()), "caller-ns/op")
	b.ReportMetric(float64(cpu.Nanoseconds()), "cpu-ns/op")
	if crossing {
		after, err := workerIO()
		if err != nil {
			b.Fatal(err)
		}
		grown, err := ioGrowth(before, after)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(grown)/float64(e.m.ops), "copied-B/op")
	}
}

// checkedOp runs one op and fails unless it reached the generator's sums.
func checkedOp(md mode, e *env) error {
	got, err := md.op(e)
	if err != nil {
		return fmt.Errorf("%s: %w", md.name, err)
	}
	if got != e.data.want {
		return fmt.Errorf("%w: %s got %+v, want %+v", errWrongSum, md.name, got, e.data.want)
	}
	return nil
}
