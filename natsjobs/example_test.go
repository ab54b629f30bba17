package natsjobs_test

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/offloadgo/offload/natsjobs"
	"github.com/offloadgo/offload/natsremote/embedded"
	"github.com/offloadgo/offload/pool"
)

type Report struct{ Customer string }

// ExportReport is a task like any other: a Serve runs it as a job.
var ExportReport = pool.Register("example.exportReport", func(_ context.Context, in Report) (string, error) {
	return "report for " + strings.ToUpper(in.Customer), nil
})

// One process runs the server, the API and the workers; each may run
// elsewhere, sharing the queue through the NATS server.
func Example() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "natsjobs-example")
	defer os.RemoveAll(dir)
	server, _ := embedded.Start(embedded.Options{StoreDir: dir})
	defer server.Shutdown()
	nc, _ := server.Connect()
	defer nc.Close()

	q, err := natsjobs.Open(ctx, nc, natsjobs.Options{Name: "reports"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer q.Close()

	// The workers: Serve runs the jobs through a pool until its ctx ends.
	p, _ := pool.New(pool.Options{Workers: 2})
	defer p.Close()
	serveCtx, stop := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- natsjobs.Serve(serveCtx, q, p, natsjobs.ServeOptions{}) }()
	defer func() { stop(); <-served }()

	// The API: enqueue, answer 202 with the id; later, the result by id.
	id, err := natsjobs.Enqueue(ctx, q, ExportReport, Report{Customer: "acme"}, natsjobs.Key("order-42"))
	if err != nil {
		fmt.Println(err)
		return
	}
	out, err := natsjobs.Wait(ctx, q, ExportReport, id)
	fmt.Println(out, err)
	st, _ := q.Status(ctx, id)
	fmt.Println(st.State, st.Attempt)
	// Output:
	// report for ACME <nil>
	// succeeded 1
}
