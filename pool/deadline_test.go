package pool_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/pool"
)

// deadlineOnly reports a deadline that its Done and Err don't yet show,
// as a ctx does between its deadline and its timer firing.
type deadlineOnly struct {
	context.Context
	at time.Time
}

func (c deadlineOnly) Deadline() (time.Time, bool) { return c.at, true }

// A task that fails once its caller's deadline has passed counts as
// Canceled, and its caller gets the deadline's error, even before the
// ctx's timer has fired: a Remote node, which enforces the deadline
// itself, answers that soon. Before the deadline a failure is a failure.
func TestFailurePastTheDeadlineIsCanceled(t *testing.T) {
	p := newPool(t, pool.Options{Workers: 1})
	parent, cancel := context.WithCancel(context.Background())
	defer cancel()
	fail := func(context.Context) (int, error) { return 0, errors.New("the node's deadline passed") }

	_, err := pool.RunFunc(deadlineOnly{parent, time.Now()}, p, fail)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	st := p.Stats()
	assert.EqualValues(t, 1, st.Canceled, "%+v", st)
	assert.Zero(t, st.Failed)

	_, err = pool.RunFunc(deadlineOnly{parent, time.Now().Add(time.Hour)}, p, fail)
	require.Error(t, err)
	assert.NotErrorIs(t, err, context.DeadlineExceeded)
	assert.EqualValues(t, 1, p.Stats().Failed)
}
