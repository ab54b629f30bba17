package pool

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// shedBlock runs until its channel closes: a task that holds a worker for
// as long as the test wants.
var shedBlock = Register("shed.block", func(_ context.Context, release chan struct{}) (int, error) {
	<-release
	return 1, nil
})

var shedNoop = Register("shed.noop", func(context.Context, int) (int, error) { return 0, nil })

func TestShedDecide(t *testing.T) {
	t.Parallel()
	const run = 100 * time.Millisecond
	tests := []struct {
		name    string
		workers int
		maxWait time.Duration
		load    Load
		left    time.Duration // time to the deadline; 0 means none
		want    ShedReason
	}{
		{"idle", 2, 0, Load{Capacity: 6, RecentRunTime: run}, 0, 0},
		{"closed beats everything", 2, 0, Load{Closed: true, InFlight: 6, Capacity: 6}, 0, ShedClosed},
		{"full", 2, 0, Load{InFlight: 6, Capacity: 6}, 0, ShedQueueFull},
		{"over full", 2, 0, Load{InFlight: 7, Capacity: 6}, 0, ShedQueueFull},
		{"unbounded is never full", 2, 0, Load{InFlight: 1000, Capacity: -1, RecentRunTime: run}, 0, 0},
		{"free worker: no wait", 2, time.Millisecond, Load{InFlight: 1, Capacity: 6, RecentRunTime: run}, 0, 0},
		// 2 workers busy, 1 queued: two tasks must end first, 2 × 100 ms ÷ 2.
		{"wait 100ms under MaxWait 100ms", 2, run, Load{InFlight: 3, Capacity: 6, RecentRunTime: run}, 0, 0},
		{"wait 150ms over MaxWait 100ms", 2, run, Load{InFlight: 4, Capacity: 6, RecentRunTime: run}, 0, ShedMaxWait},
		{"MaxWait 0 never sheds on wait", 2, 0, Load{InFlight: 5, Capacity: 6, RecentRunTime: run}, 0, 0},
		{"no run time yet: no prediction", 1, time.Nanosecond, Load{InFlight: 5, Capacity: -1}, 0, 0},
		{"one worker busy: a whole run ahead", 1, 99 * time.Millisecond, Load{InFlight: 1, Capacity: 2, RecentRunTime: run}, 0, ShedMaxWait},
		{"deadline after the wait", 1, 0, Load{InFlight: 1, Capacity: -1, RecentRunTime: run}, 101 * time.Millisecond, 0},
		{"deadline before the wait", 1, 0, Load{InFlight: 1, Capacity: -1, RecentRunTime: run}, 99 * time.Millisecond, ShedDeadline},
		{"deadline passed, pool idle", 1, 0, Load{Capacity: -1}, -time.Millisecond, ShedDeadline},
		{"MaxWait checked before deadline", 1, 50 * time.Millisecond, Load{InFlight: 1, Capacity: -1, RecentRunTime: run}, 10 * time.Millisecond, ShedMaxWait},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := &shedder{maxWait: tt.maxWait}
			tt.load.MaxWorkers = tt.workers
			assert.Equal(t, tt.want, s.decide(tt.load, tt.left, tt.left != 0))
		})
	}
}

// Shed predicts waits from Load.MaxWorkers, not from the workers alive:
// a new task may start a worker up to it. A Remote pool's is what its live
// nodes offer, so after a node is lost the same queue means a longer wait;
// after SetWorkers lowers it, too.
func TestShedPredictsFromMaxWorkers(t *testing.T) {
	t.Parallel()
	s := &shedder{maxWait: 500 * time.Millisecond}
	l := Load{Workers: 1, MaxWorkers: 4, InFlight: 2, Capacity: 10, RecentRunTime: 300 * time.Millisecond}
	assert.Zero(t, s.decide(l, 0, false), "four workers: one is free")
	l.MaxWorkers = 1
	assert.Equal(t, ShedMaxWait, s.decide(l, 0, false), "one worker: two tasks ahead, 600 ms")
	l.Capacity, l.Workers, l.MaxWorkers = 0, 0, 0
	assert.Equal(t, ShedNoNode, s.decide(l, 0, false), "no live node")
}

func TestShedRetryAfter(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		workers  int
		min, max time.Duration
		load     Load
		want     int
	}{
		{"nothing to drain: the minimum", 2, 0, 0, Load{}, 1},
		{"no run time yet: the minimum", 2, 0, 0, Load{InFlight: 50}, 1},
		{"rounds up", 2, 0, 0, Load{InFlight: 3, RecentRunTime: time.Second}, 2},
		{"exact seconds", 2, 0, 0, Load{InFlight: 8, RecentRunTime: time.Second}, 4},
		{"clamped to the default maximum", 1, 0, 0, Load{InFlight: 1000, RecentRunTime: time.Second}, 60},
		{"custom range", 1, 5 * time.Second, 10 * time.Second, Load{InFlight: 1, RecentRunTime: time.Second}, 5},
		{"custom maximum", 1, 0, 3 * time.Second, Load{InFlight: 10, RecentRunTime: time.Second}, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := newShedder(&Pool{}, ShedOptions{MinRetryAfter: tt.min, MaxRetryAfter: tt.max})
			tt.load.MaxWorkers = tt.workers
			assert.Equal(t, tt.want, s.retryAfter(tt.load))
		})
	}
}

// shedFixture is a pool with every worker held by shedBlock tasks, behind
// a Shed handler that counts the calls it passes through and the sheds.
type shedFixture struct {
	pool    *Pool
	handler http.Handler
	served  atomic.Int32
	shed    atomic.Int32
	reason  atomic.Int32
}

func newShedFixture(t *testing.T, o Options, running, queued int, so ShedOptions) *shedFixture {
	t.Helper()
	p, err := New(o)
	require.NoError(t, err)
	release := make(chan struct{})
	var futures []*Future[int]
	t.Cleanup(func() {
		close(release)
		for _, f := range futures {
			_, err := f.Wait()
			assert.NoError(t, err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		assert.NoError(t, p.Shutdown(ctx))
	})
	for range running + queued {
		f, err := Submit(context.Background(), p, shedBlock, release)
		require.NoError(t, err)
		futures = append(futures, f)
	}
	require.Eventually(t, func() bool {
		l := p.Load()
		return l.Busy == running && l.InFlight == running+queued
	}, 10*time.Second, time.Millisecond)
	fx := &shedFixture{pool: p}
	so.OnShed = func(_ *http.Request, reason ShedReason) {
		fx.shed.Add(1)
		fx.reason.Store(int32(reason))
	}
	fx.handler = Shed(p, so)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fx.served.Add(1)
		_, err := Run(r.Context(), p, shedNoop, 0)
		if err != nil {
			WriteError(w, err)
			return
		}
		_, _ = w.Write([]byte("ok"))
	}))
	return fx
}

// serve sends one request, with a deadline d from now if d > 0.
func (fx *shedFixture) serve(d time.Duration) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodGet, "/job", nil)
	if d > 0 {
		ctx, cancel := context.WithTimeout(r.Context(), d)
		defer cancel()
		r = r.WithContext(ctx)
	}
	rec := httptest.NewRecorder()
	fx.handler.ServeHTTP(rec, r)
	return rec
}

// assertShed checks a 503 answered before the handler, with a sane
// Retry-After, and the hook called with want.
func (fx *shedFixture) assertShed(t *testing.T, rec *httptest.ResponseRecorder, want ShedReason) {
	t.Helper()
	assert.Equal(t, http.StatusServiceUnavailable, rec.Code)
	assert.Zero(t, fx.served.Load(), "the handler ran")
	assert.EqualValues(t, 1, fx.shed.Load(), "OnShed calls")
	assert.Equal(t, want, ShedReason(fx.reason.Load()))
	retry, err := strconv.Atoi(rec.Header().Get("Retry-After"))
	require.NoError(t, err, "Retry-After %q", rec.Header().Get("Retry-After"))
	assert.GreaterOrEqual(t, retry, 1)
	assert.LessOrEqual(t, retry, 60)
	assert.Contains(t, rec.Body.String(), want.String())
	shed := fx.pool.Stats().Shed
	assert.EqualValues(t, 1, shed.Count(want), "Stats.Shed counts it by its reason: %+v", shed)
	assert.EqualValues(t, 1, shed.Total(), "and by no other: %+v", shed)
}

func TestShedQueueFull(t *testing.T) {
	t.Parallel()
	fx := newShedFixture(t, Options{Workers: 1, MaxQueue: 1}, 1, 1, ShedOptions{})
	fx.assertShed(t, fx.serve(0), ShedQueueFull)
}

func TestShedClosed(t *testing.T) {
	t.Parallel()
	fx := newShedFixture(t, Options{Workers: 1}, 0, 0, ShedOptions{})
	require.NoError(t, fx.pool.Close())
	fx.assertShed(t, fx.serve(0), ShedClosed)
}

func TestShedAdmits(t *testing.T) {
	t.Parallel()
	fx := newShedFixture(t, Options{Workers: 2}, 1, 0, ShedOptions{MaxWait: time.Hour})
	fx.pool.stats.recentRun.Store(int64(time.Second))
	rec := fx.serve(time.Minute)
	assert.Equal(t, http.StatusOK, rec.Code)
	assert.Equal(t, "ok", rec.Body.String())
	assert.EqualValues(t, 1, fx.served.Load())
	assert.Zero(t, fx.shed.Load())
	assert.Zero(t, fx.pool.Stats().Shed.Total())
}

func TestShedMaxWait(t *testing.T) {
	t.Parallel()
	// One worker busy and one task queued: a new task waits for two runs.
	tests := []struct {
		name    string
		maxWait time.Duration
		shed    bool
	}{
		{"over", 199 * time.Millisecond, true},
		{"at", 200 * time.Millisecond, false},
		{"off", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fx := newShedFixture(t, Options{Workers: 1, MaxQueue: 8}, 1, 1, ShedOptions{MaxWait: tt.maxWait})
			fx.pool.stats.recentRun.Store(int64(100 * time.Millisecond))
			if !tt.shed {
				// Admitted, the handler's Run queues behind the blocked
				// tasks: give it a deadline past the predicted wait, so
				// that it is admitted and then returns.
				rec := fx.serve(300 * time.Millisecond)
				assert.EqualValues(t, 1, fx.served.Load())
				assert.Zero(t, fx.shed.Load())
				assert.Equal(t, http.StatusGatewayTimeout, rec.Code) // WriteError on the deadline
				return
			}
			fx.assertShed(t, fx.serve(0), ShedMaxWait)
		})
	}
}

func TestShedDeadline(t *testing.T) {
	t.Parallel()
	t.Run("wait past the deadline", func(t *testing.T) {
		t.Parallel()
		fx := newShedFixture(t, Options{Workers: 1, MaxQueue: Unbounded}, 1, 0, ShedOptions{})
		fx.pool.stats.recentRun.Store(int64(time.Hour))
		fx.assertShed(t, fx.serve(time.Minute), ShedDeadline)
	})
	t.Run("wait before the deadline", func(t *testing.T) {
		t.Parallel()
		fx := newShedFixture(t, Options{Workers: 1, MaxQueue: Unbounded}, 1, 0, ShedOptions{})
		fx.pool.stats.recentRun.Store(int64(time.Millisecond))
		rec := fx.serve(50 * time.Millisecond) // admitted, then times out behind the blocked task
		assert.EqualValues(t, 1, fx.served.Load())
		assert.Zero(t, fx.shed.Load())
		assert.Equal(t, http.StatusGatewayTimeout, rec.Code)
	})
}

// BenchmarkShedDecision is the per-request cost of Shed's decision alone:
// the pool's Load and the checks, with and without a ctx deadline.
func BenchmarkShedDecision(b *testing.B) {
	p, err := New(Options{Workers: 2, MaxQueue: 8})
	require.NoError(b, err)
	defer p.Close()
	s := newShedder(p, ShedOptions{MaxWait: time.Second})
	p.stats.recentRun.Store(int64(time.Millisecond))
	plain := httptest.NewRequest(http.MethodGet, "/job", nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	withDeadline := plain.WithContext(ctx)
	for _, bc := range []struct {
		name string
		r    *http.Request
	}{{"NoDeadline", plain}, {"Deadline", withDeadline}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if reason, _ := s.check(bc.r); reason != 0 {
					b.Fatal("shed an idle pool's request:", reason)
				}
			}
		})
	}
	b.Run("Parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if reason, _ := s.check(withDeadline); reason != 0 {
					b.Fatal("shed an idle pool's request:", reason)
				}
			}
		})
	})
}

// BenchmarkShedReject is the cost of turning a request away: decision,
// hook and the 503 written to a recorder.
func BenchmarkShedReject(b *testing.B) {
	p, err := New(Options{Workers: 1})
	require.NoError(b, err)
	require.NoError(b, p.Close())
	h := Shed(p, ShedOptions{})(http.NotFoundHandler())
	r := httptest.NewRequest(http.MethodGet, "/job", nil)
	b.ReportAllocs()
	for b.Loop() {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		if rec.Code != http.StatusServiceUnavailable {
			b.Fatal("status", rec.Code)
		}
	}
}
