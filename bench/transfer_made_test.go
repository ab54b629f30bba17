package bench

import (
	"context"
	"testing"

	"github.com/offloadgo/offload/pool"
	"github.com/offloadgo/offload/transfer"
)

// A Buffer a Subprocess task makes and returns, which the caller then
// releases:
//
//	go test ./bench -run '^$' -bench 'WorkerMadeBuffer' -count 6
//
// The task touches every page of the Buffer, as a task filling its
// output would, so the figure includes faulting in the segment's pages
// wherever they are fresh.

var rawMake = pool.Register("bench.raw-make", func(_ context.Context, n int) (*transfer.Buffer, error) {
	b, err := transfer.NewBuffer(n)
	if err != nil {
		return nil, err
	}
	mem := b.Bytes()
	for i := 0; i < len(mem); i += 4096 {
		mem[i] = 1
	}
	return b, nil
})

func BenchmarkWorkerMadeBuffer(b *testing.B) {
	ctx := context.Background()
	for _, size := range rawSizes {
		b.Run("size="+size.name, func(b *testing.B) {
			p := newIsolated(b, pool.Subprocess, pool.Options{Workers: 1, MinWorkers: 1})
			warmUp(b, p)
			b.SetBytes(int64(size.n))
			b.ReportAllocs()
			defer cpuFrom(b).report(b)
			for b.Loop() {
				out, err := pool.Run(ctx, p, rawMake, size.n)
				if err != nil || out.Len() != size.n {
					b.Fatal(err)
				}
				out.Release()
			}
		})
	}
}
