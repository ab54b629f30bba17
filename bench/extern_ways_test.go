//go:build unix

package bench

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/internal/testkit"
)

// The Extern benchmarks' ways, each run once as a test, so that CI (which
// runs no benchmark) finds them broken, or python3 or node missing.

func TestExternEchoWays(t *testing.T) {
	for _, l := range languages {
		t.Run("lang="+l.Name, func(t *testing.T) {
			t.Parallel()
			for _, way := range []string{"bare", "pool", "spawn", "spawn-sdk"} {
				t.Run("way="+way, func(t *testing.T) {
					echo := echoWay(t, l, way)
					checkEcho(t, echo, 1)
					checkEcho(t, echo, 2) // the same process, for bare and pool
				})
			}
		})
	}
}

func TestExternBlobWays(t *testing.T) {
	data := testkit.Counting(make([]byte, 1<<20+3), 5) // over a pipe's buffer, an odd size
	for _, l := range languages {
		t.Run("lang="+l.Name, func(t *testing.T) {
			t.Parallel()
			for _, way := range []string{"pipe", "bare", "pool"} {
				t.Run("way="+way, func(t *testing.T) {
					echo := blobWay(t, l, way)
					checkBlob(t, echo, data, 1)
					checkBlob(t, echo, nil, 1)
				})
			}
		})
	}
}

// TestExternRecycleUnderLoad replaces a Python pool's workers once with
// RecycleWorkers under load, as BenchmarkExternRecycleUnderLoad does: no
// call fails.
func TestExternRecycleUnderLoad(t *testing.T) {
	p, starts := newRecyclingProgramPool(t, languages[0], "RecycleWorkers")
	once := true
	_, failed := replaceUnderLoad(t, p, starts, "RecycleWorkers", echoOn(p), func() bool {
		more := once
		once = false
		return more
	})
	require.Zero(t, failed, "calls failed while the workers were recycled")
	s := p.Stats()
	require.Equal(t, workers, int(s.Recycled), "workers recycled: %+v", s)
}
