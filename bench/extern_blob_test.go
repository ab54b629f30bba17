//go:build unix

package bench

import (
	"context"
	"io"
	"os"
	"os/exec"
	"testing"

	"github.com/offloadgo/offload/internal/testkit"
	"github.com/offloadgo/offload/pool"
)

// blobSize is the size of BenchmarkExternBlob's input and output.
const blobSize = 10 << 20

// BenchmarkExternBlob is one call at a time whose input and output are
// each blobSize (10 MiB) of raw bytes, returned unchanged ("blobecho",
// testdata/extern), three ways, for Python and Node:
//
//   - pipe: the floor, a bare pipe copy: Go writes the bytes to cat's
//     stdin and reads them back from its stdout, into buffers it reuses;
//   - bare: the call's frames written and read by a plain Go loop
//     (bareWorker), no pool, to the same worker and SDK loop;
//   - pool: pool.Run on a Subprocess pool of that worker, Workers 1.
//
// Target (issue 37): pool ≤ 3× pipe.
//
//	go test ./bench -run '^$' -bench 'ExternBlob' -benchmem -count 6 | tee blob.txt
//	benchstat -col /way blob.txt
func BenchmarkExternBlob(b *testing.B) {
	data := testkit.Counting(make([]byte, blobSize), 1)
	for _, l := range languages {
		b.Run("lang="+l.Name, func(b *testing.B) {
			for _, way := range []string{"pipe", "bare", "pool"} {
				b.Run("way="+way, func(b *testing.B) {
					echo := blobWay(b, l, way)
					checkBlob(b, echo, data, 1) // warm, and every byte checked
					b.SetBytes(2 * blobSize)
					b.ReportAllocs()
					for b.Loop() {
						checkBlob(b, echo, data, 4096) // a full compare would be a third copy
					}
				})
			}
		})
	}
}

// blobCall returns its input's bytes, having sent them to a process and
// read them back.
type blobCall func(in []byte) ([]byte, error)

// blobWay returns way's blob echo (BenchmarkExternBlob) for l's program;
// what it starts stops with tb.
func blobWay(tb testing.TB, l language, way string) blobCall {
	tb.Helper()
	switch way {
	case "pipe":
		return pipeCopy(tb)
	case "bare":
		w, err := startBare(l.blobCommand(tb))
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() {
			if err := w.close(); err != nil {
				tb.Error(err)
			}
		})
		return func(in []byte) ([]byte, error) {
			var out blobIO
			return w.call("blobecho", blobIO{}, "Data", in, &out)
		}
	case "pool":
		p := newProgramPool(tb, l.blobCommand(tb), pool.Options{})
		return func(in []byte) ([]byte, error) {
			out, err := pool.Run(context.Background(), p, xBlobEcho, blobIO{Data: in})
			return out.Data, err
		}
	}
	tb.Fatalf("no way %q", way)
	return nil
}

// pipeCopy starts cat, and returns a blobCall that writes its input to
// cat's stdin while it reads as many bytes back from cat's stdout, into
// a buffer it reuses: the bytes cross two pipes, and nothing else.
func pipeCopy(tb testing.TB) blobCall {
	tb.Helper()
	cmd := exec.Command("cat")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		_ = stdin.Close() // cat ends at its input's end
		if err := cmd.Wait(); err != nil {
			tb.Error(err)
		}
	})
	var out []byte
	return func(in []byte) ([]byte, error) {
		if len(out) != len(in) {
			out = make([]byte, len(in))
		}
		wrote := make(chan error, 1)
		go func() {
			_, err := stdin.Write(in)
			wrote <- err
		}()
		_, err := io.ReadFull(stdout, out)
		if werr := <-wrote; err == nil {
			err = werr
		}
		return out, err
	}
}

// checkBlob fails tb unless echo returns as many bytes as in, the same
// as in's at every stride'th byte and the last.
func checkBlob(tb testing.TB, echo blobCall, in []byte, stride int) {
	out, err := echo(in)
	if err != nil {
		tb.Fatal(err)
	}
	if len(out) != len(in) {
		tb.Fatalf("the echo of %d bytes returned %d bytes", len(in), len(out))
	}
	for i := 0; i < len(in); i += stride {
		if out[i] != in[i] {
			tb.Fatalf("the echo of %d bytes differs at byte %d", len(in), i)
		}
	}
	if len(in) > 0 && out[len(in)-1] != in[len(in)-1] {
		tb.Fatalf("the echo of %d bytes differs at its last byte", len(in))
	}
}
