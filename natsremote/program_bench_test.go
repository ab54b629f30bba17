package natsremote_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/internal/programtest"
	"github.com/offloadgo/offload/internal/testkit"
	"github.com/offloadgo/offload/natsremote/embedded"
	"github.com/offloadgo/offload/pool"
)

// BenchmarkProgramViaNode compares, in one run, a round trip to a Python
// worker through a Remote pool and a node (two hops, NATS on loopback)
// with the same call on a local pool of the program, and the node's
// round trip for a Go task: what the node costs a program's call.
func BenchmarkProgramViaNode(b *testing.B) {
	l := testkit.Programs[0]
	image := testkit.Counting(make([]byte, 1<<20), 1)
	direct := func(b *testing.B) *pool.Pool {
		p, err := pool.New(pool.Options{Workers: 1, Logger: quiet, Isolation: pool.Subprocess,
			Subprocess: pool.SubprocessOptions{Command: l.Command(b, l.Worker)}})
		require.NoError(b, err)
		b.Cleanup(func() { _ = p.Close() })
		return p
	}
	viaNode := func(b *testing.B, local pool.Options) *pool.Pool {
		s := startServer(b, embedded.Options{MaxPayload: 8 << 20})
		o := programNodeOptions(b, l, "bench", 1)
		if local.Workers != 0 {
			o.Local = local
		}
		serve(b, s, o)
		p := remotePool(b, connect(b, s), "bench", pool.Options{Workers: 1})
		waitNodes(b, p, 1)
		return p
	}
	echo := func(b *testing.B, p *pool.Pool) {
		ctx := testCtx(b)
		in := programtest.EchoIO{Text: "hello", N: 1}
		_, err := pool.Run(ctx, p, programtest.Echo, in) // the worker is up
		require.NoError(b, err)
		for b.Loop() {
			if _, err := pool.Run(ctx, p, programtest.Echo, in); err != nil {
				b.Fatal(err)
			}
		}
	}
	blob := func(b *testing.B, p *pool.Pool) {
		ctx := testCtx(b)
		_, err := pool.Run(ctx, p, programtest.Blob, programtest.BlobIn{Image: image})
		require.NoError(b, err)
		b.SetBytes(2 * int64(len(image)))
		for b.Loop() {
			if _, err := pool.Run(ctx, p, programtest.Blob, programtest.BlobIn{Image: image}); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("echo/direct", func(b *testing.B) { echo(b, direct(b)) })
	b.Run("echo/node", func(b *testing.B) { echo(b, viaNode(b, pool.Options{})) })
	b.Run("blob-1MiB/direct", func(b *testing.B) { blob(b, direct(b)) })
	b.Run("blob-1MiB/node", func(b *testing.B) { blob(b, viaNode(b, pool.Options{})) })
	b.Run("go-add/node", func(b *testing.B) {
		p := viaNode(b, pool.Options{Workers: 1})
		ctx := testCtx(b)
		for b.Loop() {
			if _, err := pool.Run(ctx, p, add, [2]int{1, 2}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
