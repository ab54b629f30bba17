package bench

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/offloadgo/offload/natsjobs"
	"github.com/offloadgo/offload/pool"
)

// jobStarted is the task of BenchmarkJobsDelayLateness: it says when it
// ran.
var jobStarted = pool.Register("bench.jobs.started", func(context.Context, jobInput) (time.Time, error) {
	return time.Now(), nil
})

// BenchmarkJobsDelayLateness is how late a delayed job starts: each
// iteration enqueues a job with Delay(jobsDelay) and waits for it; the
// metrics are the p50 and the max of its start minus its due time, the
// job run by Serve on a 1-worker InProcess pool. issue 39 asks for a
// start within 3 s of due; natsjobs' tests check only that no job starts
// before due, so that they pass on a busy machine. The delay is half a
// second: nats-server fires a schedule due sooner later than that (in one
// run, 50 ms delays started 0.20 s after due, 500 ms ones 2 ms after).
//
//	go test ./bench -run '^$' -bench JobsDelayLateness -benchtime 6x -count 6
func BenchmarkJobsDelayLateness(b *testing.B) {
	const jobsDelay = 500 * time.Millisecond
	ctx := context.Background()
	q := servedQueue(b, 1)
	var late []time.Duration
	for b.Loop() {
		due := time.Now().Add(jobsDelay)
		id, err := natsjobs.Enqueue(ctx, q, jobStarted, jobInputValue, natsjobs.Delay(jobsDelay))
		if err != nil {
			b.Fatal(err)
		}
		started, err := natsjobs.Wait(ctx, q, jobStarted, id)
		if err != nil {
			b.Fatal(err)
		}
		late = append(late, started.Sub(due))
	}
	slices.Sort(late)
	b.ReportMetric(late[len(late)/2].Seconds(), "late-p50-sec")
	b.ReportMetric(late[len(late)-1].Seconds(), "late-max-sec")
}
