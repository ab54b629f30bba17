package pool_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/pool"
)

// A pool made in a synctest bubble works there, beside other bubbles and
// ordinary callers running the same task at the same time: Run's recycled
// calls never cross from one to another (a bubble's channel used outside
// it kills the process), and the bubble's clock times the tasks.
func TestPoolInSynctestBubbles(t *testing.T) {
	t.Parallel()
	outside := newPool(t, pool.Options{Workers: 2})
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			_, err := pool.Run(context.Background(), outside, nap, time.Microsecond)
			assert.NoError(t, err)
		}
	})
	for i := range 4 {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				p := newPool(t, pool.Options{Workers: 2})
				start := time.Now()
				for range 50 {
					_, err := pool.Run(context.Background(), p, nap, time.Millisecond)
					require.NoError(t, err)
				}
				assert.Equal(t, 50*time.Millisecond, time.Since(start), "the bubble's clock")
				st := p.Stats()
				assert.Equal(t, uint64(50), st.Completed)
				assert.Equal(t, time.Millisecond, st.RunTime.Max, "run time by the bubble's clock")
			})
		})
	}
	t.Cleanup(func() { close(stop); wg.Wait() })
}

// A task that starts in the instant its pool was made, by the clock of a
// synctest bubble that has not moved since, counts as running: the pool's
// clock never reads 0, which its fields keep for "no time".
func TestPoolClockInAStillBubble(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		p := newPool(t, pool.Options{Workers: 1, MinWorkers: 1})
		f, err := pool.Submit(context.Background(), p, nap, time.Second)
		require.NoError(t, err)
		synctest.Wait() // the task has started, and sleeps
		time.Sleep(300 * time.Millisecond)
		assert.Equal(t, 300*time.Millisecond, p.Stats().OldestRunning)
		_, err = f.Wait()
		require.NoError(t, err)
		assert.Equal(t, time.Second, p.Stats().RunTime.Max)
	})
}
