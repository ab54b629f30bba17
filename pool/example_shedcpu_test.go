package pool_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/offloadgo/offload/pool"
)

// A handler that does its CPU work itself, in no pool: at most one runs
// at once here (GOMAXPROCS by default), none waits, and a request that
// finds the slot taken gets 503 before the handler runs.
func ExampleShedCPU() {
	started, finish := make(chan struct{}), make(chan struct{})
	render := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(started)
		<-finish // ... the CPU-bound work
		fmt.Fprintln(w, "rendered")
	})
	h := pool.ShedCPU(pool.CPUOptions{MaxRunning: 1, MaxQueue: pool.NoQueue})(render)

	first := httptest.NewRecorder()
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.ServeHTTP(first, httptest.NewRequest(http.MethodGet, "/render", nil))
	}()
	<-started
	second := httptest.NewRecorder()
	h.ServeHTTP(second, httptest.NewRequest(http.MethodGet, "/render", nil))
	close(finish)
	<-done
	fmt.Print(first.Code, " ", first.Body.String())
	fmt.Print(second.Code, " Retry-After: ", second.Header().Get("Retry-After"), " ", second.Body.String())
	// Output:
	// 200 rendered
	// 503 Retry-After: 1 pool: overloaded (queue full: every CPU slot is taken), retry later
}
