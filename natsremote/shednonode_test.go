package natsremote_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/natsremote/embedded"
	"github.com/offloadgo/offload/pool"
)

// With no live node Shed says so, in its body and in Stats.Shed, rather
// than call the pool full.
func TestShedSaysNoNode(t *testing.T) {
	t.Parallel()
	s := startServer(t, embedded.Options{})
	p := remotePool(t, connect(t, s), "shednonode", pool.Options{Workers: 2})
	require.Eventually(t, func() bool { l := p.Load(); return l.MaxWorkers == 0 && !l.Closed },
		10*time.Second, time.Millisecond, "no live node: %+v", p.Load())
	var reasons []pool.ShedReason
	handler := pool.Shed(p, pool.ShedOptions{OnShed: func(_ *http.Request, r pool.ShedReason) { reasons = append(reasons, r) }})(
		http.HandlerFunc(func(http.ResponseWriter, *http.Request) { t.Error("the handler ran") }))
	rec := httptest.NewRecorder()
	handler.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
	assert.Equal(t, http.StatusServiceUnavailable, rec.Code)
	assert.NotEmpty(t, rec.Header().Get("Retry-After"))
	assert.Equal(t, "pool: no worker node is live (no node), retry later\n", rec.Body.String())
	assert.Equal(t, []pool.ShedReason{pool.ShedNoNode}, reasons)
	shed := p.Stats().Shed
	assert.Equal(t, pool.ShedStats{NoNode: 1}, shed)
	assert.EqualValues(t, 1, shed.Count(pool.ShedNoNode))
	assert.EqualValues(t, 1, shed.Total())
}
