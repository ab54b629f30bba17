package natsjobs

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/pool"
)

// A pull request that no answer ends (its consumer's leader died with
// it) holds the slots it asked for until it is taken as lost: Serve,
// waiting for room, takes it as lost once its expiry has passed, and
// has the room again. Before, only a wait for an idle lane retired lost
// requests, and a Serve waiting for room while a lost request held
// every slot waited for ever.
func TestWaitForRoomRetiresALostRequest(t *testing.T) {
	t.Parallel()
	p, err := pool.New(pool.Options{Workers: 2})
	require.NoError(t, err)
	defer p.Close()
	q := &Queue{life: context.Background()}
	s := &server{q: q, p: p, room: make(chan struct{}, 1)}
	pl := &puller{s: s, ended: make(chan struct{}, 1)}
	lost := &lane{out: true, left: 2, expires: time.Now().Add(-time.Millisecond)}
	pl.lanes = []*lane{lost}
	s.mine = 2 // the lost request's reservation: every slot

	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	n, err := s.waitForRoom(ctx, pl.retireLostNow)
	require.NoError(t, err)
	require.NoError(t, ctx.Err(), "room came back, not the test's bound")
	assert.Equal(t, 2, n, "both slots back")
	assert.True(t, lost.retired)
	assert.Empty(t, pl.lanes)
	assert.True(t, pl.takeTrouble(), "the next request waits troubleWait")
}
