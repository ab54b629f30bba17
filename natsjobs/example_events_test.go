package natsjobs_test

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/offloadgo/offload/natsjobs"
)

// A queue's events follow each job, and Stats counts them by task:
// here a job that succeeds, as the process that enqueued and ran it saw
// it.
func ExampleJobEvent() {
	ctx := context.Background()
	ended := make(chan struct{})
	q, stop, err := startExample(natsjobs.Options{
		Name:   "reports",
		Logger: slog.New(slog.DiscardHandler), // the events' log lines
		OnJobEvent: func(ev natsjobs.JobEvent) {
			fmt.Println(ev.Task, ev.Kind, ev.Attempt)
			if ev.Kind == natsjobs.JobSucceeded {
				close(ended)
			}
		},
	}, 1)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer stop()

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
