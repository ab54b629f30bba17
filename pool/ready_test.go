package pool

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func probe(h http.Handler) (int, string) {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/readyz", nil))
	return rec.Code, rec.Body.String()
}

func idlePool(t *testing.T) *Pool {
	t.Helper()
	p, err := New(Options{Workers: 1})
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, p.Close()) })
	return p
}

// Ready follows the lag with Shed's hysteresis: not ready past MaxLag,
// ready again at MaxLag/2.
func TestReadyOnLag(t *testing.T) {
	t.Parallel()
	p := idlePool(t)
	var lag fakeLag
	h := readyOn(ReadyOptions{MaxLag: 20 * time.Millisecond}, &lag, p)
	assert.EqualValues(t, 1, lag.watches.Load(), "Ready keeps the lag sampled while its pool is open")

	code, body := probe(h)
	assert.Equal(t, http.StatusOK, code)
	assert.Equal(t, "ready\n", body)

	lag.set(35 * time.Millisecond)
	code, body = probe(h)
	assert.Equal(t, http.StatusServiceUnavailable, code)
	assert.Equal(t, "not ready: process lags: p99 scheduling latency 35ms (ready again at 10ms)\n", body)

	lag.set(15 * time.Millisecond)
	code, _ = probe(h)
	assert.Equal(t, http.StatusServiceUnavailable, code, "under MaxLag, above MaxLag/2")
	lag.set(10 * time.Millisecond)
	code, _ = probe(h)
	assert.Equal(t, http.StatusOK, code, "back to MaxLag/2")

	assert.Zero(t, p.Stats().Shed.Total(), "a probe is not a shed request")
}

// Ready is Shed's decision on every pool it was given.
func TestReadyOnPools(t *testing.T) {
	t.Parallel()
	t.Run("full", func(t *testing.T) {
		t.Parallel()
		full := newShedFixture(t, Options{Workers: 1, MaxQueue: 1}, 1, 1, ShedOptions{})
		code, body := probe(readyOn(ReadyOptions{}, &fakeLag{}, idlePool(t), full.pool))
		assert.Equal(t, http.StatusServiceUnavailable, code)
		assert.Equal(t, "not ready: pool 2 of 2 would shed (queue full)\n", body)
	})
	t.Run("max wait", func(t *testing.T) {
		t.Parallel()
		// One worker busy and one task queued: a new task waits for two runs.
		busy := newShedFixture(t, Options{Workers: 1, MaxQueue: 8}, 1, 1, ShedOptions{})
		busy.pool.stats.recentRun.Store(int64(100 * time.Millisecond))
		code, body := probe(readyOn(ReadyOptions{MaxWait: 199 * time.Millisecond}, &fakeLag{}, busy.pool))
		assert.Equal(t, http.StatusServiceUnavailable, code)
		assert.Equal(t, "not ready: pool 1 of 1 would shed (max wait)\n", body)
		code, _ = probe(readyOn(ReadyOptions{MaxWait: 200 * time.Millisecond}, &fakeLag{}, busy.pool))
		assert.Equal(t, http.StatusOK, code)
		code, _ = probe(readyOn(ReadyOptions{}, &fakeLag{}, busy.pool))
		assert.Equal(t, http.StatusOK, code, "no MaxWait: the queue bound alone")
	})
	t.Run("closed", func(t *testing.T) {
		t.Parallel()
		p := idlePool(t)
		var lag fakeLag
		h := readyOn(ReadyOptions{MaxLag: time.Second}, &lag, p)
		require.NoError(t, p.Close())
		code, body := probe(h)
		assert.Equal(t, http.StatusServiceUnavailable, code)
		assert.Equal(t, "not ready: pool 1 of 1 would shed (closed)\n", body)
	})
}

func TestReadyPanicsOnMistakes(t *testing.T) {
	t.Parallel()
	assert.PanicsWithValue(t, "pool: Ready has nothing to check: give it a pool or CPU slots", func() { Ready(ReadyOptions{}) })
	assert.PanicsWithValue(t, "pool: Ready of a nil *Pool", func() { Ready(ReadyOptions{}, idlePool(t), nil) })
}
