// Package benchpool makes the pools the benchmarks measure. Only the
// benchmarks and their tests import it.
package benchpool

import (
	"context"
	"testing"

	"github.com/offloadgo/offload/internal/testkit"
	"github.com/offloadgo/offload/pool"
)

// New returns pool.New(o), shut down when tb ends. Where the platform
// lacks what o asks for (Subprocess workers off Linux, macOS and the
// BSDs; a MemoryLimit off Linux), it skips tb; any other error fails tb.
func New(tb testing.TB, o pool.Options) *pool.Pool {
	tb.Helper()
	p, err := pool.New(o)
	testkit.SkipUnsupported(tb, err)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = p.Shutdown(context.Background()) })
	return p
}
