package natsjobs_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/offloadgo/offload/natsjobs"
	"github.com/offloadgo/offload/natsremote/embedded"
	"github.com/offloadgo/offload/pool"
)

// A queue's events follow each job, and Stats counts them by task:
// here a job that succeeds, as the process that enqueued and ran it saw
// it.
func ExampleJobEvent() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "natsjobs-example")
	defer os.RemoveAll(dir)
	server, _ := embedded.Start(embedded.Options{StoreDir: dir})
	defer server.Shutdown()
	nc, _ := server.Connect()
	defer nc.Close()

	ended := make(chan struct{})
	q, err := natsjobs.Open(ctx, nc, natsjobs.Options{
		Name:   "reports",
		Logger: slog.New(slog.DiscardHandler), // the events' log lines
		OnJobEvent: func(ev natsjobs.JobEvent) {
			fmt.Println(ev.Task, ev.Kind, ev.Attempt)
			if ev.Kind == natsjobs.JobSucceeded {
				close(ended)
			}
		},
	})
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

	if _, err := natsjobs.Enqueue(ctx, q, ExportReport, Report{Customer: "acme"}); err != nil {
		fmt.Println(err)
		return
	}
	<-ended
	st, _ := q.Stats(ctx)
	counts := st.Tasks[ExportReport.Name()]
	fmt.Println(counts.Enqueued, counts.Started, counts.Succeeded, counts.RunTime.Count)
	// Output:
	// example.exportReport enqueued 0
	// example.exportReport started 1
	// example.exportReport succeeded 1
	// 1 1 1 1
}
