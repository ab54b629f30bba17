package pool_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/pool"
)

// held is a task the test holds on its worker until release closes.
type held struct {
	*pool.Future[int]
	release chan struct{}
}

// submitHeld submits a wait task that reports on started as it starts
// and returns id once released.
func submitHeld(t *testing.T, p *pool.Pool, started chan<- int, id int) held {
	t.Helper()
	release := make(chan struct{})
	f, err := pool.Submit(context.Background(), p, wait, gate{started: started, release: release, id: id})
	require.NoError(t, err, "task %d", id)
	return held{f, release}
}

// done releases h and checks that it ran to its end: SetWorkers never
// interrupts a running task.
func (h held) done(t *testing.T, id int) {
	t.Helper()
	close(h.release)
	out, err := h.Wait()
	require.NoError(t, err, "task %d", id)
	assert.Equal(t, id, out)
}

func TestSetWorkersRefusesBelowOne(t *testing.T) {
	t.Parallel()
	p := newPool(t, pool.Options{Workers: 2, MinWorkers: 1})
	for _, n := range []int{0, -1} {
		err := p.SetWorkers(n)
		require.ErrorIs(t, err, pool.ErrInvalidWorkers, "SetWorkers(%d)", n)
		assert.Contains(t, err.Error(), "want at least 1")
	}
	o := p.Options()
	assert.Equal(t, 2, o.Workers, "a refused call leaves the pool as it was")
	assert.Equal(t, 1, o.MinWorkers)
	assert.Equal(t, 4, o.MaxQueue)
	assert.Equal(t, 6, p.Load().Capacity)
}

func TestSetWorkersAfterShutdownOrClose(t *testing.T) {
	t.Parallel()
	closed := newPool(t, pool.Options{Workers: 2})
	require.NoError(t, closed.Close())
	require.ErrorIs(t, closed.SetWorkers(3), pool.ErrClosed)
	drained := newPool(t, pool.Options{Workers: 2})
	require.NoError(t, drained.Shutdown(context.Background()))
	require.ErrorIs(t, drained.SetWorkers(3), pool.ErrClosed)
	assert.Equal(t, 2, drained.Options().Workers)
	var zero pool.Pool
	require.Error(t, zero.SetWorkers(3), "a Pool not made by New")
	var nilPool *pool.Pool
	require.Error(t, nilPool.SetWorkers(3))
}

// The capacity follows the new Workers at once, for admission and Load: an
// auto MaxQueue as Workers², a MaxQueue given in Options as given.
func TestSetWorkersQueueFollowsUnlessSet(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name         string
		maxQueue     int
		wantMaxQueue int
		wantCapacity int
	}{
		{"auto follows", 0, 9, 12},
		{"set stays", 5, 5, 8},
		{"no queue", pool.NoQueue, pool.NoQueue, 3},
		{"unbounded", pool.Unbounded, pool.Unbounded, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				p := newPool(t, pool.Options{Workers: 2, MaxQueue: tt.maxQueue})
				require.NoError(t, p.SetWorkers(3))
				o := p.Options()
				assert.Equal(t, 3, o.Workers)
				assert.Equal(t, tt.wantMaxQueue, o.MaxQueue)
				l := p.Load()
				assert.Equal(t, 3, l.MaxWorkers)
				assert.Equal(t, tt.wantCapacity, l.Capacity)
				if tt.wantCapacity < 0 {
					return
				}
				started := make(chan int, tt.wantCapacity)
				var hs []held
				for i := range tt.wantCapacity {
					hs = append(hs, submitHeld(t, p, started, i))
				}
				_, err := pool.Submit(context.Background(), p, add, [2]int{1, 2})
				require.ErrorIs(t, err, pool.ErrQueueFull, "the (capacity+1)-th submission")
				synctest.Wait()
				assert.Len(t, started, 3, "three run at once")
				for i, h := range hs {
					h.done(t, i)
				}
			})
		})
	}
}

// More workers take the queued tasks at once; fewer let the running tasks
// finish, keep the tasks queued beyond the new bound (they run, in turn,
// on the workers kept) and refuse new ones until there is room.
func TestSetWorkersWhileTasksRun(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		p := newPool(t, pool.Options{Workers: 1})
		started := make(chan int, 16)
		var hs []held
		for i := range 2 { // capacity 1 + 1²
			hs = append(hs, submitHeld(t, p, started, i))
		}
		synctest.Wait()
		require.Len(t, started, 1)
		assert.Equal(t, 0, <-started)

		require.NoError(t, p.SetWorkers(3)) // capacity 3 + 9
		synctest.Wait()
		assert.Equal(t, 1, <-started, "the queued task runs on a new worker at once")
		for i := 2; i < 7; i++ {
			hs = append(hs, submitHeld(t, p, started, i))
		}
		synctest.Wait()
		assert.Equal(t, 2, <-started)
		st := p.Stats()
		assert.Equal(t, 3, st.Workers)
		assert.Equal(t, 3, st.Busy)
		assert.Equal(t, 4, st.Queued)

		require.NoError(t, p.SetWorkers(1)) // capacity 1 + 1, holding 7
		assert.Equal(t, pool.Load{Workers: 3, MaxWorkers: 1, Busy: 3, Queued: 4, InFlight: 7, Capacity: 2}, p.Load())
		_, err := pool.Submit(context.Background(), p, add, [2]int{1, 2})
		require.ErrorIs(t, err, pool.ErrQueueFull, "refused while the pool holds more than its new capacity")

		hs[0].done(t, 0)
		hs[1].done(t, 1)
		synctest.Wait()
		st = p.Stats()
		assert.Equal(t, 1, st.Workers, "the workers above 1 exit as their tasks end")
		assert.Equal(t, 1, st.Busy)
		assert.Equal(t, 4, st.Queued, "no queued task started on a worker above the limit")
		assert.Empty(t, started)
		for i := 2; i < 7; i++ {
			hs[i].done(t, i) // each queued task then runs in turn, alone
			synctest.Wait()
			if i < 6 {
				assert.Equal(t, i+1, <-started)
				assert.Equal(t, 1, p.Stats().Busy)
			}
			if i == 4 { // one running, one queued: back at its capacity
				_, err := pool.Submit(context.Background(), p, add, [2]int{1, 2})
				require.ErrorIs(t, err, pool.ErrQueueFull, "two in flight: full")
			}
		}
		out, err := pool.Run(context.Background(), p, add, [2]int{1, 2})
		require.NoError(t, err, "room again")
		assert.Equal(t, 3, out)
		st = p.Stats()
		assert.EqualValues(t, 8, st.Completed)
		assert.EqualValues(t, 2, st.Rejected)
	})
}

// MinWorkers is lowered to the new Workers, and not raised when Workers
// grows again; the workers above it go after IdleTimeout as ever.
func TestSetWorkersLowersMinWorkers(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		p := newPool(t, pool.Options{Workers: 4, MinWorkers: 4, IdleTimeout: time.Second})
		synctest.Wait()
		require.Equal(t, 4, p.Stats().Workers)
		require.NoError(t, p.SetWorkers(2))
		assert.Equal(t, 2, p.Options().MinWorkers)
		synctest.Wait()
		assert.Equal(t, 2, p.Stats().Workers, "the idle workers above 2 exit at once")

		require.NoError(t, p.SetWorkers(3))
		o := p.Options()
		assert.Equal(t, 3, o.Workers)
		assert.Equal(t, 2, o.MinWorkers, "not raised again")
		started := make(chan int, 3)
		var hs []held
		for i := range 3 {
			hs = append(hs, submitHeld(t, p, started, i))
		}
		synctest.Wait()
		assert.Len(t, started, 3)
		assert.Equal(t, 3, p.Stats().Workers)
		for i, h := range hs {
			h.done(t, i)
		}
		time.Sleep(2 * time.Second)
		synctest.Wait()
		assert.Equal(t, 2, p.Stats().Workers, "back to MinWorkers after IdleTimeout")
	})
}

// Callers blocked in SubmitBlocking get room that SetWorkers makes at
// once; room the pool holds beyond a lowered capacity is not theirs.
func TestSetWorkersWakesBlockedSubmitters(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		p := newPool(t, pool.Options{Workers: 2, MaxQueue: pool.NoQueue})
		started := make(chan int, 8)
		var hs []held
		for id := range 2 {
			hs = append(hs, submitHeld(t, p, started, id))
			synctest.Wait() // started before the next: two workers race to report otherwise
		}
		release := make(chan struct{})
		blocked := make(chan *pool.Future[int], 2)
		for id := 2; id < 4; id++ {
			go func() {
				f, err := pool.SubmitBlocking(context.Background(), p, wait, gate{started: started, release: release, id: id})
				assert.NoError(t, err)
				blocked <- f
			}()
			synctest.Wait() // in order: 2 first
		}
		require.Equal(t, 2, waitersOf(p))

		require.NoError(t, p.SetWorkers(1))
		hs[0].done(t, 0)
		synctest.Wait()
		assert.Equal(t, 2, waitersOf(p), "one task in flight, capacity 1: no room")
		hs[1].done(t, 1)
		synctest.Wait()
		assert.Equal(t, 1, waitersOf(p), "room for one")
		require.NoError(t, p.SetWorkers(3))
		synctest.Wait()
		assert.Zero(t, waitersOf(p), "the new room goes to the one still waiting")
		assert.Equal(t, []int{0, 1}, []int{<-started, <-started})
		assert.ElementsMatch(t, []int{2, 3}, []int{<-started, <-started}, "both run at once")
		close(release)
		for range 2 {
			_, err := (<-blocked).Wait()
			require.NoError(t, err)
		}
	})
}
