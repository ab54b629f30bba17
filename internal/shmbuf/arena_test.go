package shmbuf

import (
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFreeListFirstFitAndCoalescing(t *testing.T) {
	t.Parallel()
	var f freeList
	f.put(0, 1000)
	offs := make([]int, 5)
	for i := range offs {
		off, ok := f.take(100)
		require.True(t, ok)
		offs[i] = off
	}
	assert.Equal(t, []int{0, 100, 200, 300, 400}, offs)
	assert.Equal(t, []span{{500, 500}}, f.spans)

	f.put(100, 100)
	f.put(300, 100)
	assert.Equal(t, []span{{100, 100}, {300, 100}, {500, 500}}, f.spans)
	f.put(200, 100) // merges with both neighbours
	assert.Equal(t, []span{{100, 300}, {500, 500}}, f.spans)
	f.put(400, 100)
	assert.Equal(t, []span{{100, 900}}, f.spans)
	f.put(0, 100)
	assert.Equal(t, []span{{0, 1000}}, f.spans)

	off, ok := f.take(1000)
	require.True(t, ok)
	assert.Zero(t, off)
	assert.Empty(t, f.spans)
	_, ok = f.take(1)
	assert.False(t, ok)
}

func TestFreeListRandomAgainstModel(t *testing.T) {
	t.Parallel()
	const size = 1 << 12
	var f freeList
	f.put(0, size)
	owner := make([]bool, size) // the model: which bytes are handed out
	used := map[int]int{}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 5000 {
		if len(used) > 0 && rng.IntN(2) == 0 {
			for off, n := range used {
				f.put(off, n)
				clear(owner[off : off+n])
				delete(used, off)
				break
			}
		} else {
			n := 1 + rng.IntN(200)
			if off, ok := f.take(n); ok {
				for i := off; i < off+n; i++ {
					require.False(t, owner[i], "take handed out a byte twice")
					owner[i] = true
				}
				used[off] = n
			}
		}
		inUse := 0
		for _, n := range used {
			inUse += n
		}
		require.Equal(t, size, inUse+f.free(), "no byte lost")
		for i := 1; i < len(f.spans); i++ {
			prev := f.spans[i-1]
			require.Less(t, prev.off+prev.size, f.spans[i].off, "spans sorted, disjoint and merged")
		}
	}
}

func TestArenaReuseWithoutNewSegments(t *testing.T) {
	t.Parallel()
	a := newArena(1 << 20)
	defer a.close()
	first, err := a.alloc(300 << 10)
	require.NoError(t, err)
	first.free()
	for range 100 {
		blk, err := a.alloc(300 << 10)
		require.NoError(t, err)
		assert.Same(t, first.seg, blk.seg)
		assert.Equal(t, first.off, blk.off)
		blk.free()
	}
	st := a.stats()
	assert.Equal(t, 1, st.Segments)
	assert.Zero(t, st.InUse)
}

func TestArenaCoalescesFreedNeighbours(t *testing.T) {
	t.Parallel()
	a := newArena(1 << 20)
	defer a.close()
	var blks []*block
	for range 4 {
		blk, err := a.alloc(256 << 10) // four fill the segment
		require.NoError(t, err)
		blks = append(blks, blk)
	}
	assert.Equal(t, 1, a.stats().Segments)
	for _, i := range []int{1, 3, 0, 2} {
		blks[i].free()
	}
	whole, err := a.alloc(1 << 20)
	require.NoError(t, err)
	assert.Equal(t, 1, a.stats().Segments, "the freed quarters merged into the whole segment")
	assert.Zero(t, whole.off)
	whole.free()
}

func TestArenaGrowsAndDedicatedSegments(t *testing.T) {
	t.Parallel()
	a := newArena(1 << 20)
	defer a.close()
	x, err := a.alloc(800 << 10)
	require.NoError(t, err)
	y, err := a.alloc(800 << 10)
	require.NoError(t, err)
	assert.NotSame(t, x.seg, y.seg, "grows by a segment")
	big, err := a.alloc(3<<20 + 1)
	require.NoError(t, err)
	assert.Equal(t, (3<<20+1+pageSize-1)/pageSize*pageSize, len(big.seg.mem), "a dedicated segment rounded to pages")
	st := a.stats()
	assert.Equal(t, 3, st.Segments)
	big.free()
	again, err := a.alloc(3 << 20)
	require.NoError(t, err)
	assert.Same(t, big.seg, again.seg, "the dedicated segment is reused")
	for _, b := range []*block{x, y, again} {
		b.free()
	}
	assert.Zero(t, a.stats().InUse)
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
	a := newArena(1 << 20)
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
	for _, s := range a.segs {
		assert.Equal(t, []span{{0, len(s.mem)}}, s.free.spans, "all space coalesced back")
	}
}

func TestNewBufferReusedSpaceIsZeroed(t *testing.T) {
	t.Parallel()
	a := newArena(1 << 16)
	defer a.close()
	blk, err := a.alloc(1000)
	require.NoError(t, err)
	for i := range blk.data {
		blk.data[i] = 0xAA
	}
	blk.free()
	again, err := a.alloc(1000)
	require.NoError(t, err)
	assert.Equal(t, blk.off, again.off, "space is reused")
	assert.Equal(t, make([]byte, 1000), again.data)
}
