package natsjobs_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/internal/testkit"
	"github.com/offloadgo/offload/natsjobs"
	"github.com/offloadgo/offload/pool"
)

// jobsInEveryState fills q, served by a pool of two workers, with jobs
// in every state, each enqueued after the one before
// settled, and returns their ids by state, in that order.
func jobsInEveryState(t *testing.T, q *natsjobs.Queue) map[natsjobs.State][]natsjobs.ID {
	t.Helper()
	ctx := testkit.Ctx(t)
	serve(t, q, newPool(t, pool.Options{Workers: 2}), natsjobs.ServeOptions{})
	ids := map[natsjobs.State][]natsjobs.ID{}
	// enqueued(state)(Enqueue(...)) notes the job as one that will be
	// in state.
	enqueued := func(state natsjobs.State) func(natsjobs.ID, error) natsjobs.ID {
		return func(id natsjobs.ID, err error) natsjobs.ID {
			t.Helper()
			require.NoError(t, err)
			ids[state] = append(ids[state], id)
			return id
		}
	}
	settled := func(id natsjobs.ID, state natsjobs.State) {
		t.Helper()
		require.Eventually(t, func() bool {
			st, err := q.Status(ctx, id)
			return err == nil && st.State == state
		}, 20*time.Second, 5*time.Millisecond, "job %s %s", id, state)
	}
	for i := range 3 {
		id := enqueued(natsjobs.Succeeded)(natsjobs.Enqueue(ctx, q, double, Num{i}))
		_, err := natsjobs.Wait(ctx, q, double, id)
		require.NoError(t, err)
	}
	for range 3 {
		id := enqueued(natsjobs.Dead)(natsjobs.Enqueue(ctx, q, permanent, Keyed{Key: key(t)}))
		_, err := natsjobs.Wait(ctx, q, permanent, id)
		require.ErrorIs(t, err, natsjobs.ErrDead)
	}
	for range 3 { // the queue's Backoff is an hour: they stay Retrying
		settled(enqueued(natsjobs.Retrying)(natsjobs.Enqueue(ctx, q, always, Keyed{Key: key(t)}, natsjobs.MaxAttempts(3))), natsjobs.Retrying)
	}
	for range 2 { // they fill the pool
		settled(enqueued(natsjobs.Running)(natsjobs.Enqueue(ctx, q, sleepy, Keyed{Key: key(t), Sleep: time.Hour})), natsjobs.Running)
	}
	for range 4 {
		enqueued(natsjobs.Queued)(natsjobs.Enqueue(ctx, q, sleepy, Keyed{Key: key(t), Sleep: time.Hour}))
	}
	for range 2 {
		enqueued(natsjobs.Scheduled)(natsjobs.Enqueue(ctx, q, double, Num{1}, natsjobs.Delay(time.Hour)))
	}
	for range 2 {
		id := enqueued(natsjobs.Canceled)(natsjobs.Enqueue(ctx, q, sleepy, Keyed{Key: key(t), Sleep: time.Hour}))
		require.NoError(t, q.Cancel(ctx, id))
	}
	return ids
}

// walk reads the list of state page by page through listPage, and
// checks each page's bounds.
func walk(t *testing.T, state natsjobs.State, limit int, listPage func(natsjobs.ListOptions) (natsjobs.Page, error)) []natsjobs.Status {
	t.Helper()
	var all []natsjobs.Status
	o := natsjobs.ListOptions{Limit: limit}
	for pages := 0; ; pages++ {
		require.Less(t, pages, 100, "the list of %s goes on", state)
		page, err := listPage(o)
		require.NoError(t, err)
		require.LessOrEqual(t, len(page.Jobs), limit)
		all = append(all, page.Jobs...)
		if page.Next == "" {
			return all
		}
		o.After = page.Next
	}
}

func idsOf(list []natsjobs.Status) []natsjobs.ID {
	var ids []natsjobs.ID
	for _, st := range list {
		ids = append(ids, st.ID)
	}
	return ids
}

// Each state's list holds its jobs, oldest first, whole whether read at
// once (List), by pages of two (ListPage), or by pages that may each
// read one stored job only and so come back empty with a Next.
func TestListEveryState(t *testing.T) {
	t.Parallel()
	q, _ := startQueue(t, natsjobs.Options{Backoff: func(int, error) time.Duration { return time.Hour }})
	want := jobsInEveryState(t, q)
	ctx := testkit.Ctx(t)
	for state := natsjobs.Scheduled; state <= natsjobs.Canceled; state++ {
		t.Run(state.String(), func(t *testing.T) {
			list, err := q.List(ctx, state, 100)
			require.NoError(t, err)
			assert.Equal(t, want[state], idsOf(list))
			for _, st := range list {
				assert.Equal(t, state, st.State)
				assert.NotEmpty(t, st.Task)
				assert.False(t, st.Enqueued.IsZero())
			}

			paged := walk(t, state, 2, func(o natsjobs.ListOptions) (natsjobs.Page, error) {
				return q.ListPage(ctx, state, o)
			})
			assert.Equal(t, want[state], idsOf(paged), "by pages of 2")

			short, err := q.List(ctx, state, 1)
			require.NoError(t, err)
			assert.Len(t, short, min(1, len(want[state])), "List(n) stops at n")

			scanned := walk(t, state, 2, func(o natsjobs.ListOptions) (natsjobs.Page, error) {
				return natsjobs.ListPageScanning(ctx, q, state, o, 1)
			})
			assert.Equal(t, want[state], idsOf(scanned), "by pages that read one stored job each")
		})
	}

	list, err := q.List(ctx, natsjobs.Dead, 1)
	require.NoError(t, err)
	assert.Equal(t, "bad input, not worth retrying", list[0].Err)
	assert.Equal(t, 1, list[0].Attempt)
	list, err = q.List(ctx, natsjobs.Retrying, 1)
	require.NoError(t, err)
	assert.Equal(t, "still broken", list[0].Err)
	list, err = q.List(ctx, natsjobs.Queued, 1)
	require.NoError(t, err)
	assert.Equal(t, "natsjobs.sleepy", list[0].Task)
	assert.Zero(t, list[0].Attempt)
}

// A retried dead job is listed as Queued, by the record Retry wrote, not
// as Dead.
func TestListRetriedJob(t *testing.T) {
	t.Parallel()
	q, _ := startQueue(t, natsjobs.Options{})
	ctx := testkit.Ctx(t)
	stop := serveStoppable(t, q, newPool(t, pool.Options{Workers: 1}), natsjobs.ServeOptions{})
	id, err := natsjobs.Enqueue(ctx, q, permanent, Keyed{Key: key(t)})
	require.NoError(t, err)
	_, err = natsjobs.Wait(ctx, q, permanent, id)
	require.ErrorIs(t, err, natsjobs.ErrDead)
	stop()

	require.NoError(t, q.Retry(ctx, id))
	queued, err := q.List(ctx, natsjobs.Queued, 10)
	require.NoError(t, err)
	assert.Equal(t, []natsjobs.ID{id}, idsOf(queued))
	dead, err := q.List(ctx, natsjobs.Dead, 10)
	require.NoError(t, err)
	assert.Empty(t, dead)

	err = q.Retry(ctx, id)
	require.ErrorIs(t, err, natsjobs.ErrEnded, "a queued job is no dead one")
	assert.ErrorContains(t, err, "is queued, not dead")
}

func TestListPageRefusesBadOptions(t *testing.T) {
	t.Parallel()
	q, _ := startQueue(t, natsjobs.Options{})
	ctx := testkit.Ctx(t)
	for _, c := range []struct {
		state natsjobs.State
		o     natsjobs.ListOptions
		err   string
	}{
		{natsjobs.Dead, natsjobs.ListOptions{Limit: -1}, "natsjobs: list limit -1: want 1 to 1000"},
		{natsjobs.Dead, natsjobs.ListOptions{Limit: 1001}, "natsjobs: list limit 1001: want 1 to 1000"},
		{natsjobs.Dead, natsjobs.ListOptions{After: "dead.x"}, `natsjobs: "dead.x" is no cursor of a list of dead jobs`},
		{natsjobs.Dead, natsjobs.ListOptions{After: "queued.4"}, `natsjobs: "queued.4" is no cursor of a list of dead jobs`},
		{natsjobs.State(0), natsjobs.ListOptions{}, "natsjobs: list state(0) jobs: no such state"},
		{natsjobs.State(42), natsjobs.ListOptions{}, "natsjobs: list state(42) jobs: no such state"},
	} {
		_, err := q.ListPage(ctx, c.state, c.o)
		assert.EqualError(t, err, c.err)
	}
	list, err := q.List(ctx, natsjobs.Dead, 0)
	require.NoError(t, err)
	assert.Empty(t, list)
}
