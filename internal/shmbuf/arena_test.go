package shmbuf

import (
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestArenaSizeClasses(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ n, size int }{
		{0, pageSize}, {1, pageSize}, {pageSize, pageSize}, {pageSize + 1, 2 * pageSize},
		{44 << 20, 64 << 20}, {64 << 20, 64 << 20}, {maxSegmentSize, maxSegmentSize},
	} {
		_, size := classOf(c.n)
		assert.Equal(t, c.size, size, "segment size for %d bytes", c.n)
	}
}

func TestArenaSegmentPerBlock(t *testing.T) {
	t.Parallel()
	a := newArena()
	defer a.close()
	x, err := a.alloc(100)
	require.NoError(t, err)
	y, err := a.alloc(100)
	require.NoError(t, err)
	assert.NotSame(t, x.seg, y.seg, "two Buffers never share a segment")
	assert.NotEqual(t, x.seg.id, y.seg.id)
	assert.Len(t, x.seg.mem, pageSize)
	assert.Equal(t, Ref{Segment: x.seg.id, Length: 100}, x.localRef())
	st := a.stats()
	assert.Equal(t, 2, st.Segments)
	assert.Equal(t, int64(2*pageSize), st.InUse)
	x.free()
	y.free()
	assert.Zero(t, a.stats().InUse)
}

func TestArenaReuseWithoutNewSegments(t *testing.T) {
	t.Parallel()
	a := newArena()
	defer a.close()
	first, err := a.alloc(300 << 10)
	require.NoError(t, err)
	first.free()
	for i := range 100 {
		blk, err := a.alloc(260<<10 + i) // the same size class
		require.NoError(t, err)
		assert.Same(t, first.seg, blk.seg)
		blk.free()
	}
	st := a.stats()
	assert.Equal(t, 1, st.Segments)
	assert.Zero(t, st.InUse)
}

func TestArenaKeepsABoundedFreeList(t *testing.T) {
	t.Parallel()
	a := newArena()
	defer a.close()
	var blks []*block
	for range maxFreePerClass + 10 {
		blk, err := a.alloc(1)
		require.NoError(t, err)
		blks = append(blks, blk)
	}
	for _, b := range blks {
		b.free()
	}
	assert.Equal(t, maxFreePerClass, a.stats().Segments, "freed segments beyond the class's bound are unmapped")
	big, err := a.alloc(maxFreeBytes)
	require.NoError(t, err)
	big.free()
	assert.Equal(t, maxFreePerClass, a.stats().Segments, "a segment that would pass maxFreeBytes is unmapped")

	// Across classes, the free list holds maxFreeSegments descriptors.
	blks = blks[:0]
	for class := 13; len(blks) < maxFreeSegments+maxFreePerClass; class++ {
		for range maxFreePerClass {
			blk, err := a.alloc(1 << class)
			require.NoError(t, err)
			blks = append(blks, blk)
		}
	}
	for _, b := range blks {
		b.free()
	}
	assert.Equal(t, maxFreeSegments, a.stats().Segments)
}

func TestNewBuffer44MiB(t *testing.T) {
	t.Parallel()
	const n = 44 << 20
	b, err := NewBuffer(n)
	require.NoError(t, err)
	require.Equal(t, n, b.Len())
	b.Bytes()[n-1] = 1
	moved, err := Moved(b)
	require.NoError(t, err)
	assert.Equal(t, byte(1), moved.Bytes()[n-1])
	moved.Release()
}

func TestArenaConcurrentAllocRelease(t *testing.T) {
	t.Parallel()
	a := newArena()
	defer a.close()
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(g), 7))
			var mine []*block
			for range 500 {
				if len(mine) > 0 && rng.IntN(3) == 0 {
					i := rng.IntN(len(mine))
					blk := mine[i]
					for _, c := range blk.data {
						if c != byte(g) {
							t.Errorf("block overwritten by another goroutine")
							return
						}
					}
					blk.free()
					mine = append(mine[:i], mine[i+1:]...)
					continue
				}
				blk, err := a.alloc(1 + rng.IntN(64<<10))
				if err != nil {
					t.Error(err)
					return
				}
				for i := range blk.data {
					blk.data[i] = byte(g)
				}
				mine = append(mine, blk)
			}
			for _, blk := range mine {
				blk.free()
			}
		})
	}
	wg.Wait()
	assert.Zero(t, a.stats().InUse)
}

func TestNewBufferReusedSpaceIsZeroed(t *testing.T) {
	t.Parallel()
	a := newArena()
	defer a.close()
	blk, err := a.alloc(1000)
	require.NoError(t, err)
	for i := range blk.data {
		blk.data[i] = 0xAA
	}
	blk.free()
	again, err := a.alloc(2000)
	require.NoError(t, err)
	assert.Same(t, blk.seg, again.seg, "the segment is reused")
	assert.Equal(t, make([]byte, 2000), again.data)

	// A peer could have written all of a segment it was sent.
	again.exposed = true
	again.seg.mem[len(again.seg.mem)-1] = 0xAA
	again.free()
	last, err := a.alloc(pageSize)
	require.NoError(t, err)
	assert.Same(t, blk.seg, last.seg)
	assert.Equal(t, make([]byte, pageSize), last.data)
}
