package main

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/pool"
)

// A 503 from Shed itself is marked and timed; a 503 the handler writes
// after Shed let the request in (as for a task QueueDelay failed) is not.
func TestShedTimerMarksOnlyShedsOwn503s(t *testing.T) {
	t.Parallel()
	p, err := pool.New(pool.Options{Workers: 1})
	require.NoError(t, err)
	timer := &shedTimer{}
	inner := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		markReached(r)
		pool.WriteError(w, pool.ErrQueueFull)
	})
	h := timer.wrap(pool.Shed(p, pool.ShedOptions{})(inner))

	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/job", nil))
	assert.Equal(t, http.StatusServiceUnavailable, rec.Code)
	assert.Empty(t, rec.Header().Get(shedHeader), "the handler's own 503")
	assert.Zero(t, timer.take().N)

	require.NoError(t, p.Close())
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/job", nil))
	assert.Equal(t, http.StatusServiceUnavailable, rec.Code)
	assert.Equal(t, "1", rec.Header().Get(shedHeader), "Shed's 503 on a closed pool")
	assert.NotEmpty(t, rec.Header().Get("Retry-After"))
	d := timer.take()
	assert.Equal(t, 1, d.N)
	assert.Positive(t, d.Max)
	assert.Zero(t, timer.take().N, "take forgets what it returned")
}

// schedWatch reports the goroutine scheduling latencies since its last
// reading.
func TestSchedWatchCountsSinceLastRead(t *testing.T) {
	t.Parallel()
	w := newSchedWatch()
	var wg sync.WaitGroup
	for range 100 {
		wg.Go(func() {})
	}
	wg.Wait()
	d := w.since()
	assert.Positive(t, d.N, "goroutines were scheduled")
	assert.LessOrEqual(t, d.P99, d.Max)
}
