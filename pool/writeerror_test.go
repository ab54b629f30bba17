package pool_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/pool"
)

func TestWriteErrorStatus(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		err   error
		code  int
		retry bool
	}{
		{"queue full", pool.ErrQueueFull, http.StatusServiceUnavailable, true},
		{"closed", pool.ErrClosed, http.StatusServiceUnavailable, true},
		{"wrapped queue full", fmt.Errorf("resize: %w", pool.ErrQueueFull), http.StatusServiceUnavailable, true},
		{"closed with a deadline cause", errors.Join(pool.ErrClosed, context.DeadlineExceeded), http.StatusServiceUnavailable, true},
		{"deadline", context.DeadlineExceeded, http.StatusGatewayTimeout, false},
		{"wrapped deadline", fmt.Errorf("run: %w", context.DeadlineExceeded), http.StatusGatewayTimeout, false},
		{"terminated", pool.ErrTerminated, http.StatusGatewayTimeout, false},
		{"worker did not start", pool.ErrWorkerStartFailed, http.StatusServiceUnavailable, true},
		{"wrapped worker did not start", fmt.Errorf("resize: %w", pool.ErrWorkerStartFailed), http.StatusServiceUnavailable, true},
		{"crashed", pool.ErrWorkerCrashed, http.StatusBadGateway, false},
		{"wrapped crash", fmt.Errorf("resize: %w", pool.ErrWorkerCrashed), http.StatusBadGateway, false},
		{"node lost", pool.ErrNodeLost, http.StatusBadGateway, false},
		{"panic", &pool.PanicError{Task: "t", Value: "boom"}, http.StatusInternalServerError, false},
		{"task error", errors.New("secret detail"), http.StatusInternalServerError, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rec := httptest.NewRecorder()
			pool.WriteError(rec, tt.err)
			assert.Equal(t, tt.code, rec.Code)
			assert.Equal(t, http.StatusText(tt.code)+"\n", rec.Body.String(), "the body is the status text only")
			if tt.retry {
				assert.Equal(t, "1", rec.Header().Get("Retry-After"), "outside Shed the minimum")
			} else {
				assert.Empty(t, rec.Header().Get("Retry-After"))
			}
		})
	}
}

// countingWriter records every call that would start a response.
type countingWriter struct {
	header  http.Header
	headers int
	writes  int
}

func (w *countingWriter) Header() http.Header {
	if w.header == nil {
		w.header = http.Header{}
	}
	return w.header
}
func (w *countingWriter) WriteHeader(int)             { w.headers++ }
func (w *countingWriter) Write(b []byte) (int, error) { w.writes++; return len(b), nil }

func TestWriteErrorNil(t *testing.T) {
	t.Parallel()
	w := &countingWriter{}
	pool.WriteError(w, nil)
	assert.Zero(t, w.headers)
	assert.Zero(t, w.writes)
	assert.Empty(t, w.header)
}

// outerWriter is another middleware's wrapper above Shed's.
type outerWriter struct{ http.ResponseWriter }

func (w outerWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func TestWriteErrorUnderShed(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		before   func(w http.ResponseWriter) // what the handler did before the error
		outer    bool                        // the handler sees another wrapper above Shed's
		wantCode int
		wantBody string
	}{
		{"nothing written", func(http.ResponseWriter) {}, false, http.StatusServiceUnavailable, "Service Unavailable\n"},
		{"header set, not written", func(w http.ResponseWriter) { w.Header().Set("Content-Type", "application/json") },
			false, http.StatusServiceUnavailable, "Service Unavailable\n"},
		{"informational header only", func(w http.ResponseWriter) { w.WriteHeader(http.StatusEarlyHints) },
			false, http.StatusServiceUnavailable, "Service Unavailable\n"},
		{"status written", func(w http.ResponseWriter) { w.WriteHeader(http.StatusAccepted) }, false, http.StatusAccepted, ""},
		{"body written", func(w http.ResponseWriter) { _, _ = io.WriteString(w, "partial") }, false, http.StatusOK, "partial"},
		{"flushed", func(w http.ResponseWriter) { w.(http.Flusher).Flush() }, false, http.StatusOK, ""},
		{"flushed by ResponseController", func(w http.ResponseWriter) {
			require.NoError(t, http.NewResponseController(w).Flush())
		}, false, http.StatusOK, ""},
		{"body written, outer wrapper", func(w http.ResponseWriter) { _, _ = io.WriteString(w, "partial") }, true, http.StatusOK, "partial"},
		{"nothing written, outer wrapper", func(http.ResponseWriter) {}, true, http.StatusServiceUnavailable, "Service Unavailable\n"},
	}
	p, err := pool.New(pool.Options{Workers: 1})
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, p.Close()) })
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			inner := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				tt.before(w)
				pool.WriteError(w, pool.ErrQueueFull)
				pool.WriteError(w, errors.New("a second error")) // never a second response
			})
			var h http.Handler = inner
			if tt.outer {
				h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { inner(outerWriter{w}, r) })
			}
			srv := httptest.NewServer(pool.Shed(p, pool.ShedOptions{})(h))
			defer srv.Close()
			resp, err := srv.Client().Get(srv.URL)
			require.NoError(t, err)
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			assert.Equal(t, tt.wantCode, resp.StatusCode)
			assert.Equal(t, tt.wantBody, string(body))
			if tt.wantCode == http.StatusServiceUnavailable {
				assert.Equal(t, "1", resp.Header.Get("Retry-After"))
			}
		})
	}
}

// TestShedOverHTTP fills a real pool through a real server: the requests
// past capacity get 503 with Retry-After at once, the others their result.
func TestShedOverHTTP(t *testing.T) {
	t.Parallel()
	p := newPool(t, pool.Options{Workers: 1, MaxQueue: 1})
	release := make(chan struct{})
	started := make(chan int, 2)
	var sheds []pool.ShedReason
	h := pool.Shed(p, pool.ShedOptions{OnShed: func(_ *http.Request, reason pool.ShedReason) {
		sheds = append(sheds, reason) // only the test goroutine's requests are shed
	}})(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		out, err := pool.Run(r.Context(), p, wait, gate{started: started, release: release, honorCtx: true})
		if err != nil {
			pool.WriteError(w, err)
			return
		}
		fmt.Fprint(w, out)
	}))
	srv := httptest.NewServer(h)
	defer srv.Close()

	codes := make(chan int, 2)
	for range 2 { // one runs, one queues
		go func() {
			resp, err := srv.Client().Get(srv.URL)
			if err != nil {
				codes <- -1
				return
			}
			resp.Body.Close()
			codes <- resp.StatusCode
		}()
	}
	<-started
	require.Eventually(t, func() bool { return p.Load().InFlight == 2 }, 10*time.Second, time.Millisecond)

	start := time.Now()
	resp, err := srv.Client().Get(srv.URL)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Less(t, time.Since(start), time.Second, "a shed request is answered at once")
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	retry, err := strconv.Atoi(resp.Header.Get("Retry-After"))
	require.NoError(t, err)
	assert.True(t, retry >= 1 && retry <= 60, "Retry-After %d", retry)
	assert.Equal(t, []pool.ShedReason{pool.ShedQueueFull}, sheds)

	close(release)
	assert.Equal(t, http.StatusOK, <-codes)
	assert.Equal(t, http.StatusOK, <-codes)
}

func ExampleShed() {
	p, err := pool.New(pool.Options{Workers: 1, MaxQueue: pool.NoQueue})
	if err != nil {
		panic(err)
	}
	defer p.Close()

	// Jobs wait at most 500 ms for a worker; the rest get 503 at once.
	shed := pool.Shed(p, pool.ShedOptions{MaxWait: 500 * time.Millisecond})
	h := shed(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		out, err := pool.Run(r.Context(), p, Sum, SumIn{A: 1, B: 2})
		if err != nil {
			pool.WriteError(w, err) // 503, 504 or 500, never after a write
			return
		}
		fmt.Fprintln(w, out)
	}))

	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/sum", nil))
	fmt.Print(rec.Code, " ", rec.Body.String())

	p.Close()
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/sum", nil))
	fmt.Print(rec.Code, " Retry-After: ", rec.Header().Get("Retry-After"), " ", rec.Body.String())
	// Output:
	// 200 3
	// 503 Retry-After: 1 pool: overloaded (closed), retry later
}

func ExampleWriteError() {
	rec := httptest.NewRecorder()
	pool.WriteError(rec, fmt.Errorf("resize: %w", context.DeadlineExceeded))
	fmt.Print(rec.Code, " ", rec.Body.String())
	// Output: 504 Gateway Timeout
}
