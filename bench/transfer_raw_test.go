package bench

import (
	"context"
	"fmt"
	"testing"

	"github.com/offloadgo/offload/pool"
	"github.com/offloadgo/offload/transfer"
)

// Raw transfer, copy versus move, to a worker and back, in one run:
//
//	go test ./bench -run '^$' -bench 'RawTransfer' -benchmem -count 6 | tee raw.txt
//	benchstat -col /mode -row /isolation,/size raw.txt
//
// copy sends a []byte (msgpack through the pipe to a Subprocess worker;
// in process the slice is shared, nothing is copied) and gets back a small
// int. move sends a *transfer.Buffer (filled once, before the timer) and
// the worker echoes it back, so the parent reuses it: move measures a
// round trip *both ways*, copy one way plus a small result. Both read the
// first and last byte in the worker. size=1KB/mode=copy is the plain 1 KB
// round trip that the bar compares the 44 MiB move with.

type rawMoved struct {
	Buf *transfer.Buffer
	Sum int
}

var (
	rawCopy = pool.Register("bench.raw-copy", func(_ context.Context, in []byte) (int, error) {
		return int(in[0]) + int(in[len(in)-1]), nil
	})
	rawMove = pool.Register("bench.raw-move", func(_ context.Context, in *transfer.Buffer) (rawMoved, error) {
		b := in.Bytes()
		return rawMoved{Buf: in, Sum: int(b[0]) + int(b[len(b)-1])}, nil
	})
)

var rawSizes = []struct {
	name string
	n    int
}{{"1KB", 1 << 10}, {"1MB", 1 << 20}, {"44MiB", 44 << 20}}

func BenchmarkRawTransfer(b *testing.B) {
	ctx := context.Background()
	for _, iso := range isolations {
		for _, size := range rawSizes {
			prefix := fmt.Sprintf("isolation=%s/size=%s", iso, size.name)
			b.Run(prefix+"/mode=copy", func(b *testing.B) {
				p := newIsolated(b, iso, pool.Options{Workers: 1, MinWorkers: 1})
				warmUp(b, p)
				data := make([]byte, size.n)
				data[0], data[len(data)-1] = 1, 2
				// The pool makes its call body of this size once, and
				// reuses it: the timing is of the calls after the first.
				if _, err := pool.Run(ctx, p, rawCopy, data); err != nil {
					b.Fatal(err)
				}
				b.SetBytes(int64(size.n))
				b.ReportAllocs()
				defer cpuFrom(b).report(b)
				for b.Loop() {
					if sum, err := pool.Run(ctx, p, rawCopy, data); err != nil || sum != 3 {
						b.Fatal(sum, err)
					}
				}
			})
			b.Run(prefix+"/mode=move", func(b *testing.B) {
				p := newIsolated(b, iso, pool.Options{Workers: 1, MinWorkers: 1})
				warmUp(b, p)
				buf, err := transfer.NewBuffer(size.n)
				if err != nil {
					b.Fatal(err)
				}
				buf.Bytes()[0], buf.Bytes()[size.n-1] = 1, 2
				b.SetBytes(int64(size.n))
				b.ReportAllocs()
				defer cpuFrom(b).report(b)
				for b.Loop() {
					out, err := pool.Run(ctx, p, rawMove, buf)
					if err != nil || out.Sum != 3 {
						b.Fatal(out.Sum, err)
					}
					buf = out.Buf // the same memory, back from the worker
				}
				buf.Release()
			})
		}
	}
}
