package pool_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/internal/ctxattack"
	"github.com/offloadgo/offload/internal/testkit"
	"github.com/offloadgo/offload/pool"
)

// A caller's ctx whose methods panic or block, from their 1st call to
// their 6th, fails its own call or panics on its caller's goroutine, and
// never the process or the pool: the pool calls the ctx's methods on the
// caller's goroutine alone, and so does its Tracer (natsremote's tests run
// the same on a Remote pool).
func TestFaultyContextFailsItsOwnCallOnly(t *testing.T) {
	t.Parallel()
	for _, iso := range isolations {
		for _, traced := range []bool{false, true} {
			name, o := iso.String(), pool.Options{Workers: 1}
			if traced {
				name, o.Tracer = name+"-traced", &fakeTracer{}
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				ctxattack.Attack(t, newIsolatedPool(t, iso, o))
			})
		}
	}
}

// A SubmitBlocking caller whose ctx's methods panic or block while it
// waits for room, or as its ctx ends there, leaves the pool as it found
// it: no waiter left in the list, where the next freed slot would go to
// nobody.
func TestFaultyContextWaitingForRoomCostsNoSlot(t *testing.T) {
	t.Parallel()
	for _, method := range testkit.Methods {
		for from := 1; from <= 6; from++ {
			for _, block := range []bool{false, true} {
				t.Run(testkit.FaultName(method, from, block), func(t *testing.T) {
					t.Parallel()
					p := newPool(t, pool.Options{Workers: 1, MaxQueue: pool.NoQueue})
					release := make(chan struct{})
					started := make(chan int, 1)
					busy, err := pool.Submit(context.Background(), p, wait, gate{started: started, release: release})
					require.NoError(t, err)
					<-started

					ctx, cancel := context.WithCancel(context.Background())
					defer cancel()
					bad := testkit.NewFaultCtx(ctx, method, from, block)
					defer bad.Release()
					ended := make(chan struct{})
					go func() {
						defer close(ended)
						defer func() { _ = recover() }() // the caller's own panic: fine
						if f, err := pool.SubmitBlocking(bad, p, add, [2]int{1, 2}); err == nil {
							_, _ = f.Wait()
						}
					}()
				waiting: // for room, unless its ctx stopped it before
					for deadline := time.Now().Add(20 * time.Second); waitersOf(p) == 0; {
						require.True(t, time.Now().Before(deadline), "SubmitBlocking neither waits nor ends")
						select {
						case <-ended:
							break waiting
						case <-bad.Blocked():
							break waiting
						case <-time.After(time.Millisecond):
						}
					}
					cancel() // the wait ends: the caller reads its ctx's end
					select {
					case <-ended:
					case <-bad.Blocked():
					case <-time.After(20 * time.Second):
						t.Fatal("SubmitBlocking did not return when its ctx ended")
					}
					bad.Release()
					testkit.Within(t, 20*time.Second, "SubmitBlocking, its ctx released", func() { <-ended })

					close(release)
					_, err = busy.Wait()
					require.NoError(t, err)
					assert.Zero(t, waitersOf(p))
					out, err := pool.Run(context.Background(), p, add, [2]int{2, 3})
					require.NoError(t, err, "the slot the waiter left is free")
					assert.Equal(t, 5, out)
				})
			}
		}
	}
}

// ctxValueKey keys the value TestTaskAsksTheCallersCtxForValuesOnly puts
// in a caller's ctx.
type ctxValueKey struct{}

// ctxSeen is what readCtx saw of its ctx.
type ctxSeen struct {
	Value    any
	Deadline time.Time
}

// readCtx reports its ctx's deadline (asked n times), then the value
// under ctxValueKey.
var readCtx = pool.Register("test.read-ctx", func(ctx context.Context, n int) (ctxSeen, error) {
	var dl time.Time
	for range n {
		dl, _ = ctx.Deadline()
	}
	return ctxSeen{Deadline: dl, Value: ctx.Value(ctxValueKey{})}, nil
})

// An InProcess task's ctx has its caller's values, asked of the caller's
// ctx when the task asks (a panic there is the task's: a *PanicError),
// and its deadline as read at submission, never asked again.
func TestTaskAsksTheCallersCtxForValuesOnly(t *testing.T) {
	t.Parallel()
	p := newPool(t, pool.Options{Workers: 1})
	deadline := time.Now().Add(time.Hour)
	parent, cancel := context.WithDeadline(context.WithValue(context.Background(), ctxValueKey{}, "v"), deadline)
	defer cancel()

	seen, err := pool.Run(parent, p, readCtx, 1)
	require.NoError(t, err)
	assert.Equal(t, "v", seen.Value)
	assert.True(t, seen.Deadline.Equal(deadline))

	// Deadline is read once, at submission: the task's ctx answers from
	// that, however often the task asks.
	seen, err = pool.Run(testkit.NewFaultCtx(parent, "Deadline", 2, false), p, readCtx, 3)
	require.NoError(t, err)
	assert.True(t, seen.Deadline.Equal(deadline))

	// Run asks no value at submission: the task's own ask panics.
	_, err = pool.Run(testkit.NewFaultCtx(parent, "Value", 1, false), p, readCtx, 1)
	var pe *pool.PanicError
	require.ErrorAs(t, err, &pe)
	assert.Contains(t, fmt.Sprint(pe.Value), "FaultCtx: Value")

	out, err := pool.Run(context.Background(), p, add, [2]int{2, 3})
	require.NoError(t, err, "the pool serves on")
	assert.Equal(t, 5, out)
}
