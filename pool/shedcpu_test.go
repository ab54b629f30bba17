package pool

import (
	"context"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// cpuFixture is ShedCPU in front of a handler that holds its slot until
// the test lets it go: a CPU-bound handler, with the test as its clock.
type cpuFixture struct {
	slots   *CPUSlots
	handler http.Handler

	mu      sync.Mutex
	gates   map[string]chan struct{} // a request's handler returns once its gate closes
	started []string                 // request names, in the order their handlers began
	reasons []ShedReason
}

func newCPUFixture(opts CPUOptions) *cpuFixture {
	fx := &cpuFixture{gates: map[string]chan struct{}{}}
	opts.OnShed = func(_ *http.Request, r ShedReason) {
		fx.mu.Lock()
		fx.reasons = append(fx.reasons, r)
		fx.mu.Unlock()
	}
	fx.slots = NewCPUSlots(opts)
	fx.handler = fx.slots.Shed(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := r.URL.Query().Get("name")
		fx.mu.Lock()
		fx.started = append(fx.started, name)
		fx.mu.Unlock()
		<-fx.gate(name)
		_, _ = w.Write([]byte(name))
	}))
	return fx
}

// serve sends the request called name on a goroutine of its own; its
// answer comes on the channel returned.
func (fx *cpuFixture) serve(ctx context.Context, name string) <-chan *httptest.ResponseRecorder {
	done := make(chan *httptest.ResponseRecorder, 1)
	go func() {
		rec := httptest.NewRecorder()
		req := httptest.NewRequestWithContext(ctx, http.MethodGet, "/?name="+name, nil)
		fx.handler.ServeHTTP(rec, req)
		done <- rec
	}()
	synctest.Wait() // the request has run, waits for a slot, or was answered
	return done
}

func (fx *cpuFixture) gate(name string) chan struct{} {
	fx.mu.Lock()
	defer fx.mu.Unlock()
	g, ok := fx.gates[name]
	if !ok {
		g = make(chan struct{})
		fx.gates[name] = g
	}
	return g
}

// finish lets name's handler return.
func (fx *cpuFixture) finish(name string) { close(fx.gate(name)) }

func (fx *cpuFixture) startedNow() []string {
	fx.mu.Lock()
	defer fx.mu.Unlock()
	return append([]string(nil), fx.started...)
}

func (fx *cpuFixture) shedNow() []ShedReason {
	fx.mu.Lock()
	defer fx.mu.Unlock()
	return append([]ShedReason(nil), fx.reasons...)
}

func assertCPUShed(t *testing.T, rec *httptest.ResponseRecorder, retryAfter string) {
	t.Helper()
	assert.Equal(t, http.StatusServiceUnavailable, rec.Code)
	assert.Equal(t, retryAfter, rec.Header().Get("Retry-After"))
	assert.Contains(t, rec.Body.String(), "pool: overloaded")
}

// At most MaxRunning handlers run; MaxQueue more wait without running;
// the next is shed at once, before its handler; a freed slot goes to the
// first waiting.
func TestShedCPUBoundsRunningAndWaiting(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		fx := newCPUFixture(CPUOptions{MaxRunning: 2, MaxQueue: 1})
		ctx := t.Context()
		a, b := fx.serve(ctx, "a"), fx.serve(ctx, "b")
		c := fx.serve(ctx, "c")
		assert.Equal(t, []string{"a", "b"}, fx.startedNow(), "c waits for a slot")

		assertCPUShed(t, <-fx.serve(ctx, "d"), "1")
		assert.Equal(t, []ShedReason{ShedQueueFull}, fx.shedNow())
		assert.Equal(t, []string{"a", "b"}, fx.startedNow(), "d's handler never ran")

		fx.finish("a")
		assert.Equal(t, "a", (<-a).Body.String())
		synctest.Wait()
		assert.Equal(t, []string{"a", "b", "c"}, fx.startedNow(), "a's slot went to c")

		e := fx.serve(ctx, "e") // the queue has room again
		assert.Len(t, fx.startedNow(), 3, "e waits")
		for _, name := range []string{"b", "c", "e"} {
			fx.finish(name)
		}
		for _, done := range []<-chan *httptest.ResponseRecorder{b, c, e} {
			assert.Equal(t, http.StatusOK, (<-done).Code)
		}
		assert.Equal(t, []ShedReason{ShedQueueFull}, fx.shedNow(), "nothing else shed")
	})
}

// Waiting requests get the slots in the order they came.
func TestShedCPUWaitsInOrder(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		fx := newCPUFixture(CPUOptions{MaxRunning: 1, MaxQueue: 4})
		ctx := t.Context()
		names := []string{"first", "second", "third", "fourth", "fifth"}
		var done []<-chan *httptest.ResponseRecorder
		for _, name := range names {
			done = append(done, fx.serve(ctx, name)) // serve waits: arrivals are ordered
		}
		for i, name := range names {
			assert.Equal(t, names[:i+1], fx.startedNow())
			fx.finish(name)
			assert.Equal(t, http.StatusOK, (<-done[i]).Code)
			synctest.Wait()
		}
		assert.Empty(t, fx.shedNow())
	})
}

// A request whose ctx ends while it waits leaves the queue, answered 503
// without its handler, and its place is free for another.
func TestShedCPUWaiterGivesUp(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		fx := newCPUFixture(CPUOptions{MaxRunning: 1, MaxQueue: 1, RetryAfter: 1500 * time.Millisecond})
		a := fx.serve(t.Context(), "a")
		ctx, cancel := context.WithCancel(t.Context())
		b := fx.serve(ctx, "b")
		cancel()
		assertCPUShed(t, <-b, "2") // RetryAfter rounded up to whole seconds
		assert.Equal(t, []ShedReason{ShedDeadline}, fx.shedNow())

		c := fx.serve(t.Context(), "c")
		assert.Equal(t, []ShedReason{ShedDeadline}, fx.shedNow(), "b's place went to c")
		fx.finish("a")
		fx.finish("c")
		assert.Equal(t, http.StatusOK, (<-a).Code)
		assert.Equal(t, http.StatusOK, (<-c).Code)
		assert.Equal(t, []string{"a", "c"}, fx.startedNow(), "b's handler never ran")
	})
}

// NoQueue sheds whenever every slot runs a handler.
func TestShedCPUNoQueue(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		fx := newCPUFixture(CPUOptions{MaxRunning: 1, MaxQueue: NoQueue})
		a := fx.serve(t.Context(), "a")
		assertCPUShed(t, <-fx.serve(t.Context(), "b"), "1")
		fx.finish("a")
		<-a
		c := fx.serve(t.Context(), "c")
		fx.finish("c")
		assert.Equal(t, http.StatusOK, (<-c).Code, "a's end freed its slot")
		assert.Equal(t, []ShedReason{ShedQueueFull}, fx.shedNow())
	})
}

// A handler that panics gives its slot back.
func TestShedCPUPanicReleases(t *testing.T) {
	t.Parallel()
	h := ShedCPU(CPUOptions{MaxRunning: 1, MaxQueue: NoQueue})(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		panic(http.ErrAbortHandler)
	}))
	for range 2 {
		assert.PanicsWithValue(t, http.ErrAbortHandler, func() {
			h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/", nil))
		}, "the handler ran: its slot was free")
	}
}

// The zero CPUOptions: one running a CPU, at most GOMAXPROCS, as many
// waiting.
func TestShedCPUDefaults(t *testing.T) {
	t.Parallel()
	s := NewCPUSlots(CPUOptions{})
	procs := min(runtime.GOMAXPROCS(0), runtime.NumCPU())
	assert.Equal(t, procs, cap(s.running))
	assert.EqualValues(t, 2*procs, s.limit)
	assert.Equal(t, "1", s.retry)
	require.EqualValues(t, 3, NewCPUSlots(CPUOptions{MaxRunning: 3, MaxQueue: NoQueue}).limit)
}

// With GOMAXPROCS above the CPUs, the default leaves the spare P to the
// requests ShedCPU does not wrap. Not parallel: GOMAXPROCS is the
// process's.
func TestShedCPUDefaultLeavesSpareP(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(runtime.NumCPU() + 1))
	assert.Equal(t, runtime.NumCPU(), cap(NewCPUSlots(CPUOptions{}).running))
}

// What ShedCPU adds to a request that finds a slot free.
func BenchmarkShedCPU(b *testing.B) {
	h := ShedCPU(CPUOptions{MaxRunning: 1 << 20})(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	w, r := httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/", nil)
	b.ReportAllocs()
	for b.Loop() {
		h.ServeHTTP(w, r)
	}
}

// The same, from every P at once: the slots are shared.
func BenchmarkShedCPUParallel(b *testing.B) {
	h := ShedCPU(CPUOptions{MaxRunning: 1 << 20})(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		w, r := httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/", nil)
		for pb.Next() {
			h.ServeHTTP(w, r)
		}
	})
}
