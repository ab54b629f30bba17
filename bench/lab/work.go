package main

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/offloadgo/offload/budget"
	"github.com/offloadgo/offload/pool"
)

// roundsPerItem sizes one item of the job: about a microsecond of integer
// mixing, small enough for budget to cut chunks close to their budget.
const roundsPerItem = 300

// mix is CPU-bound work the compiler cannot fold away: xorshift rounds.
func mix(x uint64, rounds int) uint64 {
	for range rounds {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
	}
	return x
}

// spinItems runs the job's n items on the calling goroutine, looking at
// ctx every 1024 items so that a pool task stops when its caller is gone.
func spinItems(ctx context.Context, n int) (uint64, error) {
	x := uint64(n) | 1
	for i := range n {
		if i&1023 == 0 && ctx.Err() != nil {
			return 0, ctx.Err()
		}
		x = mix(x, roundsPerItem)
	}
	return x, nil
}

// chunked runs the same n items through budget.Loop with opts.
func chunked(ctx context.Context, n int, opts budget.Options) (uint64, error) {
	x := uint64(n) | 1
	_, err := budget.Loop(ctx, n, func(int) { x = mix(x, roundsPerItem) }, opts)
	return x, err
}

// chunkSpec parses the chunked modes: "chunk5" (5 ms chunks, yield with
// runtime.Gosched before each), "chunk20after" (20 ms chunks, yield after
// each: the first runs at once in the handler, the reference's variant),
// "chunk5netpoll" (yield with budget.NetpollYield, which lets the network
// in when the server has one P).
func chunkSpec(mode string) (budget.Options, bool) {
	rest, found := strings.CutPrefix(mode, "chunk")
	if !found {
		return budget.Options{}, false
	}
	var opts budget.Options
	rest, opts.NoYieldFirst = strings.CutSuffix(rest, "after")
	rest, netpoll := strings.CutSuffix(rest, "netpoll")
	if netpoll {
		opts.Yield = budget.NetpollYield
	}
	ms, err := strconv.Atoi(rest)
	if err != nil || ms <= 0 {
		return budget.Options{}, false
	}
	opts.Budget = time.Duration(ms) * time.Millisecond
	return opts, true
}

// jobTask is the job as a pool task, for in-process and subprocess pools.
var jobTask = pool.Register("lab.job", func(ctx context.Context, items int) (uint64, error) {
	return spinItems(ctx, items)
})

// calibrate returns how many items take about d on this machine: the best
// of a few short timed runs, scaled (the best, since noise only adds time).
func calibrate(d time.Duration) int {
	const trial = 2000
	best := time.Duration(1<<63 - 1)
	for range 7 {
		start := time.Now()
		_, _ = spinItems(context.Background(), trial)
		best = min(best, time.Since(start))
	}
	return max(1, int(int64(d)*trial/int64(max(best, 1))))
}
