package pool

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeSlots is a transport's slot count that the test sets.
type fakeSlots struct{ n atomic.Int64 }

func (f *fakeSlots) Slots() int { return int(f.n.Load()) }

// holdInternal blocks until its channel closes.
var holdInternal = Register("internal.hold", func(_ context.Context, release chan struct{}) (int, error) {
	<-release
	return 0, nil
})

// When the transport's live workers offer more slots (a Remote pool's
// node joined), the callers blocked in SubmitBlocking get the new room at
// once, oldest first, up to the new capacity: no freed slot has to come
// first.
func TestMoreSlotsWakeWaiters(t *testing.T) {
	t.Parallel()
	p, err := New(Options{Workers: 4, MaxQueue: NoQueue})
	require.NoError(t, err)
	defer p.Close()
	slots := &fakeSlots{}
	slots.n.Store(1)
	p.slots = slots // as a Remote pool's transport would count them: one node, one slot

	release := make(chan struct{})
	defer close(release)
	ctx := context.Background()
	_, err = Submit(ctx, p, holdInternal, release)
	require.NoError(t, err)
	admitted := make(chan error, 3)
	for range 3 {
		go func() {
			_, err := SubmitBlocking(ctx, p, holdInternal, release)
			admitted <- err
		}()
	}
	require.Eventually(t, func() bool { return WaitersForTest(p) == 3 }, 10*time.Second, time.Millisecond)

	p.events.MoreSlots() // told of nothing new: nobody is woken
	assert.Equal(t, 3, WaitersForTest(p))

	slots.n.Store(3) // a node with two slots joined
	p.events.MoreSlots()
	for range 2 {
		select {
		case err := <-admitted:
			require.NoError(t, err)
		case <-time.After(10 * time.Second):
			t.Fatal("the new room went to no waiter")
		}
	}
	assert.Equal(t, 1, WaitersForTest(p), "room for two more, no more")
	assert.Equal(t, 3, p.Load().InFlight)
}
