package pool_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/internal/testkit"
	"github.com/offloadgo/offload/pool"
)

// notWorthRetrying is an error a task marks permanent, as
// natsjobs.Permanent does: by a method, which package pool carries across
// a process boundary.
type notWorthRetrying struct{}

func (notWorthRetrying) Error() string   { return "bad input" }
func (notWorthRetrying) Permanent() bool { return true }

var failPermanently = pool.Register("test.permanent", func(context.Context, struct{}) (int, error) {
	return 0, notWorthRetrying{}
})

// TestPermanentCrossesToTheCaller: a worker process's error marked
// permanent reaches the caller as a RemoteError whose Permanent says so.
func TestPermanentCrossesToTheCaller(t *testing.T) {
	p, _ := newProcPool(t, pool.Options{Workers: 1})
	_, err := pool.Run(testkit.Ctx(t), p, failPermanently, struct{}{})
	var re *pool.RemoteError
	require.ErrorAs(t, err, &re)
	assert.True(t, re.Permanent())
	assert.Equal(t, "bad input", re.Message)

	_, err = pool.Run(testkit.Ctx(t), p, fail, "plain")
	require.ErrorAs(t, err, &re)
	assert.False(t, re.Permanent())
}
