package pool_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"

	"github.com/offloadgo/offload/pool"
)

// Handlers that do their CPU work themselves, in no pool, and a readiness
// probe that says not ready while their slots are full: here one handler
// runs and one request waits.
func ExampleCPUSlots() {
	started, finish := make(chan struct{}, 1), make(chan struct{})
	slots := pool.NewCPUSlots(pool.CPUOptions{MaxRunning: 1, MaxQueue: 1})
	mux := http.NewServeMux()
	mux.Handle("/render", slots.Shed(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		started <- struct{}{}
		<-finish // ... the CPU-bound work
	})))
	mux.Handle("/readyz", pool.Ready(pool.ReadyOptions{CPU: []*pool.CPUSlots{slots}}))
	probe := func() {
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/readyz", nil))
		fmt.Print(rec.Code, " ", rec.Body.String())
	}

	probe()
	done := make(chan struct{})
	for range 2 {
		go func() {
			mux.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/render", nil))
			done <- struct{}{}
		}()
	}
	<-started // one runs; the other waits, or is about to
	for !slots.Full() {
		runtime.Gosched() // the other request is on its way to its waiting place
	}
	probe()
	close(finish)
	<-started
	<-done
	<-done
	probe()
	// Output:
	// 200 ready
	// 503 not ready: CPU slots 1 of 1 overloaded (1 running, 1 waiting)
	// 200 ready
}
