package natsjobs_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"sync/atomic"

	"github.com/offloadgo/offload/natsjobs"
	"github.com/offloadgo/offload/natsremote/embedded"
	"github.com/offloadgo/offload/pool"
)

// feedHostDown makes ImportFeed fail for good while it is true.
var feedHostDown atomic.Bool

var ImportFeed = pool.Register("example.importFeed", func(_ context.Context, url string) (string, error) {
	if feedHostDown.Load() {
		return "", natsjobs.Permanent(errors.New("feed host unreachable"))
	}
	return "imported " + url, nil
})

// An operator finds a dead job through the admin handler and, once its
// cause is fixed, runs it again.
func ExampleAdminHandler() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "natsjobs-example")
	defer os.RemoveAll(dir)
	server, _ := embedded.Start(embedded.Options{StoreDir: dir})
	defer server.Shutdown()
	nc, _ := server.Connect()
	defer nc.Close()
	q, err := natsjobs.Open(ctx, nc, natsjobs.Options{Name: "feeds"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer q.Close()
	p, _ := pool.New(pool.Options{Workers: 1})
	defer p.Close()
	serveCtx, stop := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- natsjobs.Serve(serveCtx, q, p, natsjobs.ServeOptions{}) }()
	defer func() { stop(); <-served }()

	// The handler has no auth of its own: mount it behind the operator's.
	mux := http.NewServeMux()
	mux.Handle("/admin/", http.StripPrefix("/admin", natsjobs.AdminHandler(q)))
	get := func(method, target string) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, httptest.NewRequest(method, target, nil))
		return rec
	}

	feedHostDown.Store(true)
	id, _ := natsjobs.Enqueue(ctx, q, ImportFeed, "https://example.com/feed")
	_, err = natsjobs.Wait(ctx, q, ImportFeed, id)
	fmt.Println(err)

	var page struct {
		Jobs []struct{ ID, State, Error string }
	}
	_ = json.Unmarshal(get("GET", "/admin/jobs?state=dead&limit=10").Body.Bytes(), &page)
	for _, job := range page.Jobs {
		fmt.Println(job.State, job.Error)
	}

	feedHostDown.Store(false)
	fmt.Println(get("POST", "/admin/jobs/"+page.Jobs[0].ID+"/retry").Code)
	out, err := natsjobs.Wait(ctx, q, ImportFeed, id)
	fmt.Println(out, err)
	// Output:
	// natsjobs: job is dead: feed host unreachable
	// dead feed host unreachable
	// 200
	// imported https://example.com/feed <nil>
}
