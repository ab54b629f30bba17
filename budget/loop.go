package budget

import "context"

// Loop calls fn(i) for i from 0 to n-1 on the calling goroutine, in chunks
// of about opts.Budget, pausing between chunks (and before the first unless
// opts.NoYieldFirst) as opts says. It blocks until every item has run or
// ctx ends.
//
// ctx is checked at chunk boundaries only, never inside fn: when it ends,
// Loop stops before the next chunk and returns ctx.Err() with the Report so
// far (every item counted in Report.Items ran exactly once). Bad arguments
// (n < 0, nil fn, invalid opts) return an error matching ErrInvalidOptions
// before anything runs. A panic in fn propagates to the caller. Loop is
// safe for concurrent use; each call is independent.
func Loop(ctx context.Context, n int, fn func(i int), opts Options) (Report, error) {
	if err := checkArgs(n, fn == nil, opts); err != nil {
		return Report{}, err
	}
	return run(ctx, n, opts, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			fn(i)
		}
	})
}

// Each calls fn(item) for every item in order, on the calling goroutine,
// with Loop's chunking, yielding, cancellation and error contract.
func Each[T any](ctx context.Context, items []T, fn func(T), opts Options) (Report, error) {
	if err := checkArgs(len(items), fn == nil, opts); err != nil {
		return Report{}, err
	}
	return run(ctx, len(items), opts, func(lo, hi int) {
		// Ranging over the subslice drops the bounds check a plain loop
		// over the whole slice would not pay either.
		for _, it := range items[lo:hi] {
			fn(it)
		}
	})
}

// run is the shared body of Loop and Each: yield, check ctx, chunk, repeat.
func run(ctx context.Context, n int, opts Options, stride func(lo, hi int)) (Report, error) {
	r := newRunner(opts)
	for next := 0; next < n; {
		if next > 0 || !opts.NoYieldFirst {
			r.pause(ctx)
		}
		if err := ctx.Err(); err != nil {
			return r.finish(), err
		}
		next = r.chunk(next, n, stride).End
	}
	return r.finish(), nil
}
