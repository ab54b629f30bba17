package budget

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLoopAndEachRunEveryItemOnceInOrder(t *testing.T) {
	t.Parallel()
	for _, n := range []int{0, 1, 7, 1000, 300_000} {
		t.Run("", func(t *testing.T) {
			t.Parallel()
			var got []int
			rep, err := Loop(context.Background(), n, func(i int) { got = append(got, i) }, Options{Budget: 100 * time.Microsecond})
			require.NoError(t, err)
			require.Len(t, got, n)
			for i, v := range got {
				require.Equal(t, i, v)
			}
			assert.Equal(t, n, rep.Items)

			items := make([]int, n)
			for i := range items {
				items[i] = i * 3
			}
			each := make([]int, 0, n)
			rep, err = Each(context.Background(), items, func(v int) { each = append(each, v) }, Options{})
			require.NoError(t, err)
			assert.Equal(t, items, each)
			assert.Equal(t, n, rep.Items)
		})
	}
}

func TestReportFields(t *testing.T) {
	t.Parallel()
	opts, clk := withFake(Options{Budget: 5 * time.Millisecond})
	rep, err := Loop(context.Background(), 23, func(int) { clk.advance(time.Millisecond) }, opts)
	require.NoError(t, err)
	assert.Equal(t, Report{
		Items:      23,
		Chunks:     5, // 5+5+5+5+3
		MaxBlock:   5 * time.Millisecond,
		Total:      23 * time.Millisecond, // fake yields take no time
		Busy:       23 * time.Millisecond,
		Yields:     5, // before each chunk
		ClockReads: 23,
	}, rep)
}

func TestCancelStopsAtChunkBoundary(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		cancelAt int // item whose run cancels ctx; -1: before the call
		items    int // items run when Loop returns
	}{
		{"before the call", -1, 0},
		{"in the first chunk", 0, 5},
		{"mid third chunk", 12, 15},
		{"at the last item of a chunk", 9, 10},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tc.cancelAt < 0 {
				cancel()
			}
			opts, clk := withFake(Options{Budget: 5 * time.Millisecond})
			var seen []int
			rep, err := Loop(ctx, 1000, func(i int) {
				seen = append(seen, i)
				clk.advance(time.Millisecond)
				if i == tc.cancelAt {
					cancel()
				}
			}, opts)
			require.ErrorIs(t, err, context.Canceled)
			assert.Equal(t, tc.items, rep.Items, "the chunk that saw the cancel finishes, no more")
			assert.Len(t, seen, tc.items)
			assert.Equal(t, tc.items/5, rep.Chunks)
		})
	}
}

func TestEachDeadlineReturnsDeadlineExceeded(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	items := make([]struct{}, 1<<40>>20) // 1 Mi zero-size items
	start := time.Now()
	rep, err := Each(ctx, items, func(struct{}) { spin(time.Microsecond) }, Options{Budget: time.Millisecond})
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Less(t, time.Since(start), 5*time.Second, "stops soon after the deadline, not after all items")
	assert.Less(t, rep.Items, len(items))
	assert.Positive(t, rep.Items)
}

func TestYieldBeforeFirstChunk(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name         string
		noYieldFirst bool
		want         string
	}{
		{"default yields first", false, "Y11Y11Y1"},
		{"opt-out starts with work", true, "11Y11Y1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var log []byte
			opts, clk := withFake(Options{
				Budget:       2 * time.Millisecond,
				NoYieldFirst: tc.noYieldFirst,
				Yield:        func() { log = append(log, 'Y') },
			})
			rep, err := Loop(context.Background(), 5, func(int) {
				log = append(log, '1')
				clk.advance(time.Millisecond)
			}, opts)
			require.NoError(t, err)
			assert.Equal(t, tc.want, string(log), "yields fall exactly between chunks")
			assert.Equal(t, 3, rep.Chunks)
			assert.Equal(t, len(tc.want)-5, rep.Yields)
		})
	}
}

// TestCustomYieldLetsLockWaitersIn holds a mutex for the whole loop and
// releases it only in Yield: another goroutine waiting on the mutex must
// get in while the loop is still running.
func TestCustomYieldLetsLockWaitersIn(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var waiterIn atomic.Bool
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	mu.Lock()
	var wg sync.WaitGroup
	in := make(chan struct{})
	wg.Go(func() {
		mu.Lock()
		waiterIn.Store(true)
		mu.Unlock()
		close(in)
	})
	yields := 0
	rep, err := Loop(ctx, 1<<30, func(int) {
		if waiterIn.Load() {
			cancel() // the point is made; stop at the chunk boundary
		}
	}, Options{
		Budget: time.Millisecond,
		Yield: func() {
			yields++
			mu.Unlock()
			<-in // the waiter takes the lock now, or has
			mu.Lock()
		},
	})
	mu.Unlock()
	wg.Wait()
	require.ErrorIs(t, err, context.Canceled)
	assert.True(t, waiterIn.Load())
	assert.Less(t, rep.Items, 1<<30)
	assert.Equal(t, yields, rep.Yields)
}

// TestDefaultYieldFirstLetsRunnableGoroutineIn pins the run to one P: the
// default yield (runtime.Gosched) before the first chunk must let an
// already runnable goroutine run before any item, so the first chunk
// already sees its effect. Not parallel: it changes GOMAXPROCS.
func TestDefaultYieldFirstLetsRunnableGoroutineIn(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	var other atomic.Bool
	done := make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		defer close(done)
		other.Store(true)
	}()
	sawOtherFirst := false
	rep, err := Loop(ctx, 1<<30, func(i int) {
		if i == 0 {
			sawOtherFirst = other.Load()
		}
		if other.Load() {
			cancel()
		}
	}, Options{Budget: time.Millisecond})
	<-done
	require.ErrorIs(t, err, context.Canceled)
	assert.True(t, sawOtherFirst, "the goroutine ran in the yield before the first item")
	assert.Equal(t, 1, rep.Chunks)
}

// TestEveryDefaultYieldLetsWaitingGoroutineIn pins the run to one P and
// wakes a helper goroutine at the start of every chunk: by the start of the
// next chunk, the yield in between must have let it run, every time (a
// single runtime.Gosched misses about one yield in 61). Not parallel: it
// changes GOMAXPROCS.
func TestEveryDefaultYieldLetsWaitingGoroutineIn(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	wake := make(chan struct{}, 1)
	var ran atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range wake {
			ran.Add(1)
		}
	}()
	opts, clk := withFake(Options{Budget: 3})
	const chunks = 1000
	missed, woken := 0, int64(0)
	_, err := Loop(context.Background(), chunks, func(int) {
		clk.advance(3) // every item is one chunk
		if ran.Load() != woken {
			missed++
		}
		select {
		case wake <- struct{}{}:
			woken++
		default: // the helper has not taken the last wake-up yet
		}
	}, opts)
	close(wake)
	<-done
	require.NoError(t, err)
	assert.Zero(t, missed, "yields that did not let the woken goroutine run")
}
