package natsjobs

import (
	"context"
	"fmt"
	"maps"
	"sync"
	"time"

	"github.com/offloadgo/offload/pool"
)

// Stats returns what this process counted of q's jobs by task since
// Open (its Enqueues, and the attempts its Serves ran: see
// pool.JobStats), with the depth of the work stream and the age of its
// oldest job as the server reports them now: one request to the
// server, so that a metrics scrape, not each job, pays for the figures.
// It blocks on the server for as long as ctx allows. When the server
// can't be asked it returns the counts with an error, and Depth and
// Oldest zero.
//
// A *Queue is what poolprom.Collector.AddJobs and poolotel.RegisterJobs
// take.
func (q *Queue) Stats(ctx context.Context) (pool.JobStats, error) {
	st := pool.JobStats{Tasks: q.counts.snapshot()}
	info, err := q.work.Info(ctx)
	if err != nil {
		return st, fmt.Errorf("natsjobs: stats of queue %q: %w", q.o.Name, err)
	}
	st.Depth = int(info.State.Msgs)
	if st.Depth > 0 && !info.State.FirstTime.IsZero() {
		st.Oldest = max(time.Since(info.State.FirstTime), 0)
	}
	return st, nil
}

// counters count a queue's events by task, in this process.
type counters struct {
	mu     sync.Mutex
	byTask map[string]*taskCounters
}

type taskCounters struct {
	counts pool.JobTaskStats // all but RunTime
	run    pool.Durations
}

// count counts ev, and the attempt's run time if it ran.
func (c *counters) count(ev JobEvent) {
	c.mu.Lock()
	t := c.byTask[ev.Task]
	if t == nil {
		if c.byTask == nil {
			c.byTask = map[string]*taskCounters{}
		}
		t = &taskCounters{}
		c.byTask[ev.Task] = t
	}
	n := &t.counts
	switch ev.Kind {
	case JobEnqueued:
		n.Enqueued++
	case JobStarted:
		n.Started++
	case JobSucceeded:
		n.Succeeded++
	case JobRetried:
		n.Retried++
	case JobDead:
		n.Dead++
	case JobCanceled:
		n.Canceled++
	}
	c.mu.Unlock()
	if ev.Took > 0 {
		t.run.Record(ev.Took)
	}
}

// snapshot is the counts by task, each with its run times' summary.
func (c *counters) snapshot() map[string]pool.JobTaskStats {
	c.mu.Lock()
	byTask := maps.Clone(c.byTask)
	counts := make(map[string]pool.JobTaskStats, len(byTask))
	for name, t := range byTask {
		counts[name] = t.counts
	}
	c.mu.Unlock()
	for name, t := range byTask {
		s := counts[name]
		s.RunTime = t.run.Summary()
		counts[name] = s
	}
	return counts
}
