package pool

import (
	"context"
	"math"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeLag is a lag source a test sets by hand.
type fakeLag struct {
	lag     atomic.Int64
	watches atomic.Int32
}

func (f *fakeLag) set(d time.Duration)        { f.lag.Store(int64(d)) }
func (f *fakeLag) recentLag() time.Duration   { return time.Duration(f.lag.Load()) }
func (f *fakeLag) watchWhile(context.Context) { f.watches.Add(1) }

// testBounds are a small histogram of the runtime's shape: buckets
// (-Inf,0], (0,1ms], (1ms,10ms], (10ms,100ms], (100ms,+Inf).
var testBounds = []float64{math.Inf(-1), 0, 0.001, 0.010, 0.100, math.Inf(1)}

// The recent lag is the 99th percentile of what the last lagWindow reads
// added to the cumulative histogram: long waits show at the next read and
// leave the window lagWindow reads later.
func TestLagSamplerWindow(t *testing.T) {
	t.Parallel()
	var s lagSampler
	cum := make([]uint64, 5)
	read := func(add ...uint64) time.Duration {
		for i := range add {
			cum[i] += add[i]
		}
		s.sample(cum, testBounds)
		return s.recentLag()
	}
	assert.Zero(t, read(0, 0, 0, 0, 0), "nothing recorded: unknown")
	assert.Equal(t, time.Millisecond, read(0, 1000, 0, 0, 0), "every wait under 1 ms")
	assert.Equal(t, time.Millisecond, read(0, 1000, 0, 9, 0), "under 1% of the window's waits are long")
	assert.Equal(t, 100*time.Millisecond, read(0, 0, 0, 100, 0), "over 1% of them are")
	for i := range lagWindow - 2 {
		assert.Equal(t, 100*time.Millisecond, read(0, 100, 0, 0, 0), "read %d: the long waits are in the window", i)
	}
	assert.Equal(t, 100*time.Millisecond, read(0, 100, 0, 0, 0), "the long waits' read is still in the window")
	assert.Equal(t, time.Millisecond, read(0, 100, 0, 0, 0), "and then it is not")
	assert.Equal(t, 100*time.Millisecond, read(0, 0, 0, 0, 100), "the open-ended bucket reads as its lower bound")

	s.reset()
	assert.Zero(t, s.recentLag(), "a restarted sampler knows nothing")
	assert.Zero(t, read(0, 0, 0, 0, 0), "one read: no window yet")
	cum = make([]uint64, 3)
	assert.Zero(t, read(0, 0, 0), "another shape of histogram starts the window over")
}

// The gate turns on past max and off only at max/2 or below.
func TestLagGateHysteresis(t *testing.T) {
	t.Parallel()
	var src fakeLag
	g := &lagGate{src: &src, max: 20 * time.Millisecond}
	steps := []struct {
		lag  time.Duration
		over bool
	}{
		{0, false},
		{20 * time.Millisecond, false}, // at max: not past it
		{21 * time.Millisecond, true},
		{15 * time.Millisecond, true}, // under max, above max/2: still on
		{11 * time.Millisecond, true},
		{10 * time.Millisecond, false}, // back to max/2
		{15 * time.Millisecond, false}, // under max: stays off
		{time.Second, true},
		{0, false},
	}
	for i, st := range steps {
		src.set(st.lag)
		assert.Equal(t, st.over, g.over(), "step %d: lag %v", i, st.lag)
	}
}

// lagFixture is an idle pool behind a Shed that reads a fake lag.
type lagFixture struct {
	pool    *Pool
	lag     *fakeLag
	handler http.Handler
	served  atomic.Int32
	reasons []ShedReason
}

func newLagFixture(t *testing.T, so ShedOptions) *lagFixture {
	t.Helper()
	p, err := New(Options{Workers: 1})
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, p.Close()) })
	fx := &lagFixture{pool: p, lag: &fakeLag{}}
	so.OnShed = func(_ *http.Request, r ShedReason) { fx.reasons = append(fx.reasons, r) }
	fx.handler = shedOn(p, so, fx.lag)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fx.served.Add(1)
		_, _ = w.Write([]byte("ok"))
	}))
	return fx
}

func (fx *lagFixture) serve() *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	fx.handler.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
	return rec
}

func TestShedOnLag(t *testing.T) {
	t.Parallel()
	fx := newLagFixture(t, ShedOptions{MaxLag: 20 * time.Millisecond, MinRetryAfter: 2 * time.Second})
	assert.EqualValues(t, 1, fx.lag.watches.Load(), "Shed keeps the lag sampled while the pool is open")

	assert.Equal(t, http.StatusOK, fx.serve().Code, "no lag")
	fx.lag.set(30 * time.Millisecond)
	rec := fx.serve()
	assert.Equal(t, http.StatusServiceUnavailable, rec.Code)
	assert.Equal(t, "2", rec.Header().Get("Retry-After"), "MinRetryAfter")
	assert.Contains(t, rec.Body.String(), "lag")
	assert.EqualValues(t, 1, fx.served.Load(), "the handler did not run")

	fx.lag.set(15 * time.Millisecond)
	assert.Equal(t, http.StatusServiceUnavailable, fx.serve().Code, "under MaxLag, above MaxLag/2: still shedding")
	fx.lag.set(10 * time.Millisecond)
	assert.Equal(t, http.StatusOK, fx.serve().Code, "back to MaxLag/2")
	assert.EqualValues(t, 2, fx.served.Load())

	assert.Equal(t, []ShedReason{ShedLag, ShedLag}, fx.reasons)
	shed := fx.pool.Stats().Shed
	assert.EqualValues(t, 2, shed.Lag, "%+v", shed)
	assert.EqualValues(t, 2, shed.Count(ShedLag))
	assert.EqualValues(t, 2, shed.Total(), "counted under no other reason: %+v", shed)
}

// A closed pool sheds as closed, lag or not; without MaxLag, lag is never
// read and never sheds.
func TestShedLagOrder(t *testing.T) {
	t.Parallel()
	fx := newLagFixture(t, ShedOptions{MaxLag: time.Millisecond})
	fx.lag.set(time.Second)
	require.NoError(t, fx.pool.Close())
	assert.Equal(t, http.StatusServiceUnavailable, fx.serve().Code)
	assert.Equal(t, []ShedReason{ShedClosed}, fx.reasons)

	off := newLagFixture(t, ShedOptions{})
	off.lag.set(time.Hour)
	assert.Equal(t, http.StatusOK, off.serve().Code)
	assert.Zero(t, off.lag.watches.Load(), "no MaxLag: nothing sampled")
}

// The process's sampler runs while a pool given a MaxLag is open, once
// for all of them, and stops when the last closes (goleak checks that its
// goroutine ended). Not parallel: the sampler is the process's.
func TestProcessLagSamplerLifetime(t *testing.T) {
	a, err := New(Options{Workers: 1})
	require.NoError(t, err)
	b, err := New(Options{Workers: 1})
	require.NoError(t, err)
	require.False(t, processLag.watching(), "no pool asks yet")

	_ = Shed(a, ShedOptions{MaxLag: time.Second})
	_ = Shed(a, ShedOptions{MaxLag: time.Second})
	_ = Shed(b, ShedOptions{MaxLag: time.Second})
	assert.True(t, processLag.watching())
	processLag.mu.Lock()
	assert.Equal(t, 2, processLag.watchers, "once a pool, however many Sheds")
	processLag.mu.Unlock()

	require.NoError(t, a.Close())
	require.Eventually(t, func() bool {
		processLag.mu.Lock()
		defer processLag.mu.Unlock()
		return processLag.watchers == 1
	}, 10*time.Second, time.Millisecond)
	assert.True(t, processLag.watching(), "b is open")
	require.NoError(t, b.Close())
	require.Eventually(t, func() bool { return !processLag.watching() }, 10*time.Second, time.Millisecond)

	closed, err := New(Options{Workers: 1})
	require.NoError(t, err)
	require.NoError(t, closed.Close())
	_ = Shed(closed, ShedOptions{MaxLag: time.Second})
	assert.False(t, processLag.watching(), "a closed pool asks for nothing")
}

// A sampler reads every lagInterval while a watcher's ctx lasts, stops
// when the last ends, and starts afresh with the next: on a synctest
// bubble's clock, so no read depends on the machine's speed.
func TestLagSamplerTicks(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var s lagSampler
		reads := func() int {
			s.mu.Lock()
			defer s.mu.Unlock()
			return len(s.window)
		}
		a, stopA := context.WithCancel(context.Background())
		b, stopB := context.WithCancel(context.Background())
		s.watchWhile(a)
		s.watchWhile(b)
		assert.Equal(t, 1, reads(), "the first read is made at once")
		time.Sleep(3 * lagInterval)
		synctest.Wait()
		assert.Equal(t, 4, reads(), "then one every lagInterval")
		time.Sleep(10 * lagInterval)
		synctest.Wait()
		assert.Equal(t, lagWindow+1, reads(), "the window keeps lagWindow+1 reads")

		stopA()
		synctest.Wait()
		assert.True(t, s.watching(), "b still watches")
		stopB()
		synctest.Wait() // the sampling goroutine has ended: the bubble would not end otherwise
		assert.False(t, s.watching())
		time.Sleep(3 * lagInterval)
		synctest.Wait()
		assert.Equal(t, lagWindow+1, reads(), "no reads while stopped")

		c, stopC := context.WithCancel(context.Background())
		defer stopC()
		s.watchWhile(c)
		assert.Equal(t, 1, reads(), "a restarted sampler starts a new window")
	})
}

// One read of the runtime's histogram and a window update: what the
// process's sampler does every lagInterval.
func BenchmarkLagSample(b *testing.B) {
	var s lagSampler
	s.readAndSample()
	b.ReportAllocs()
	for b.Loop() {
		s.readAndSample()
	}
}

// What Shed adds to each request with MaxLag set.
func BenchmarkLagGate(b *testing.B) {
	g := &lagGate{src: &lagSampler{}, max: time.Second}
	b.ReportAllocs()
	for b.Loop() {
		if g.over() {
			b.Fatal("over")
		}
	}
}
