package natsjobs_test

import (
	"testing"

	"github.com/nats-io/nuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/internal/testkit"
	"github.com/offloadgo/offload/natsjobs"
)

// A Key claimed for a job whose publish has not landed (another
// Enqueue's, in flight or failing) gives a second Enqueue with that Key
// no id until the job is stored; if the first Enqueue gives the Key up,
// the second claims it and stores its own job.
func TestKeyClaimedForAJobNotStoredYet(t *testing.T) {
	t.Parallel()
	q, nc := startQueue(t, natsjobs.Options{})
	ctx := testkit.Ctx(t)
	keys := keyValue(t, nc, "OFFLOAD_JOBS_jobs_KEYS")
	waits := make(chan natsjobs.ID, 100)
	natsjobs.HearKeyWaitsForTest(q, waits)

	// The first Enqueue's claim, its publish failing: the key is given up.
	failing := nuid.Next()
	_, err := keys.Create(ctx, natsjobs.KeyOfForTest("a"), []byte(failing))
	require.NoError(t, err)
	second := make(chan natsjobs.ID, 1)
	go func() {
		id, err := natsjobs.Enqueue(ctx, q, double, Num{1}, natsjobs.Key("a"))
		assert.NoError(t, err)
		second <- id
	}()
	assert.Equal(t, natsjobs.ID(failing), receive(t, waits), "the second Enqueue waits")
	require.NoError(t, keys.Delete(ctx, natsjobs.KeyOfForTest("a")))
	id := receive(t, second)
	assert.NotEqual(t, natsjobs.ID(failing), id, "an id that names no job")
	st, err := q.Status(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, natsjobs.Queued, st.State)

	// The first Enqueue's claim, its publish landing: the second gets its id.
	landing := nuid.Next()
	_, err = keys.Create(ctx, natsjobs.KeyOfForTest("b"), []byte(landing))
	require.NoError(t, err)
	go func() {
		id, err := natsjobs.Enqueue(ctx, q, double, Num{2}, natsjobs.Key("b"))
		assert.NoError(t, err)
		second <- id
	}()
	assert.Equal(t, natsjobs.ID(landing), receive(t, waits), "the second Enqueue waits")
	publishJob(t, nc, landing, "natsjobs.double")
	assert.Equal(t, natsjobs.ID(landing), receive(t, second))
	assert.EqualValues(t, 2, queuedJobs(t, nc), "one job per key")
}

// receive is the next value on c, or fails the test once its ctx ends.
func receive[T any](t *testing.T, c <-chan T) T {
	t.Helper()
	select {
	case v := <-c:
		return v
	case <-testkit.Ctx(t).Done():
		require.FailNow(t, "nothing received")
		panic("unreachable")
	}
}
