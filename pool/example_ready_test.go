package pool_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/offloadgo/offload/pool"
)

// A service sheds requests once every CPU is taken, and its readiness
// probe says so; its liveness probe depends on nothing.
func ExampleReady() {
	p, err := pool.New(pool.Options{Workers: 2})
	if err != nil {
		panic(err)
	}
	defer p.Close()
	mux := http.NewServeMux()
	shed := pool.Shed(p, pool.ShedOptions{MaxWait: 100 * time.Millisecond, MaxLag: 50 * time.Millisecond})
	mux.Handle("/resize", shed(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// ... pool.Run(r.Context(), p, Resize, in), pool.WriteError on error
	})))
	mux.Handle("/readyz", pool.Ready(pool.ReadyOptions{MaxLag: 50 * time.Millisecond, MaxWait: 100 * time.Millisecond}, p))
	mux.HandleFunc("/livez", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok\n") })

	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/readyz", nil))
	fmt.Print(rec.Code, " ", rec.Body.String())
	// Output: 200 ready
}
