package pool_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/pool"
)

// A pool that has finished no task yet predicts from how long its first
// task has run: Shed keeps MaxWait from the start, rather than admit up
// to the queue's bound until a task ends.
func TestShedPredictsBeforeTheFirstTaskEnds(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		p := newPool(t, pool.Options{Workers: 1, MaxQueue: 8})
		assert.Zero(t, p.Load().RecentRunTime, "nothing started")
		first, err := pool.Submit(context.Background(), p, nap, 200*time.Millisecond)
		require.NoError(t, err)
		time.Sleep(150 * time.Millisecond)
		assert.Equal(t, 150*time.Millisecond, p.Load().RecentRunTime, "how long the first task has run")

		var reasons []pool.ShedReason
		handler := pool.Shed(p, pool.ShedOptions{MaxWait: 100 * time.Millisecond,
			OnShed: func(_ *http.Request, r pool.ShedReason) { reasons = append(reasons, r) }})(
			http.HandlerFunc(func(http.ResponseWriter, *http.Request) { t.Error("admitted behind a task of 150 ms and more") }))
		rec := httptest.NewRecorder()
		handler.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
		assert.Equal(t, http.StatusServiceUnavailable, rec.Code)
		assert.Equal(t, []pool.ShedReason{pool.ShedMaxWait}, reasons)

		_, err = first.Wait()
		require.NoError(t, err)
		assert.Equal(t, 200*time.Millisecond, p.Load().RecentRunTime, "the finished task's")
	})
}
