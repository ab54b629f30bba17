package poolprom

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/offloadgo/offload/pool"
)

// Jobs is a queue of durable jobs as a Collector reads it:
// *natsjobs.Queue is one. It is an interface, over pool.JobStats, so
// that poolprom links no NATS into a program that runs no jobs.
type Jobs interface {
	// Stats returns the queue's counts and, unless it fails, its depth.
	Stats(ctx context.Context) (pool.JobStats, error)
}

// jobsScrapeTimeout bounds how long a scrape waits for a queue's depth.
const jobsScrapeTimeout = 5 * time.Second

// jobQueues are the job queues a Collector reports, with their
// descriptors.
type jobQueues struct {
	buckets []float64
	descs   jobDescs

	mu     sync.Mutex
	queues map[string]Jobs
}

type jobDescs struct {
	enqueued, started, succeeded, retried, dead, canceled *prometheus.Desc
	runTime, depth, oldest                                *prometheus.Desc
}

func newJobQueues(ns string, buckets []float64) *jobQueues {
	desc := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc(prometheus.BuildFQName(ns, "", name), help, labels, nil)
	}
	task := []string{"queue", "task"}
	return &jobQueues{buckets: buckets, queues: map[string]Jobs{}, descs: jobDescs{
		enqueued:  desc("jobs_enqueued_total", "Jobs this process stored (Enqueue), or sent back from dead (Retry), by task.", task...),
		started:   desc("jobs_started_total", "Attempts this process's Serves began, by task.", task...),
		succeeded: desc("jobs_succeeded_total", "Jobs that ended Succeeded in this process, by task.", task...),
		retried:   desc("jobs_retried_total", "Attempts that failed here and left the job for another, by task.", task...),
		dead:      desc("jobs_dead_total", "Jobs that ended Dead in this process, by task.", task...),
		canceled:  desc("jobs_canceled_total", "Jobs this process's Cancel ended, by task.", task...),
		runTime:   desc("job_run_seconds", "Each attempt's time in the pool, from submission to its end, by task.", task...),
		depth:     desc("jobs_depth", "Jobs in the queue's work stream: waiting, retrying or running.", "queue"),
		oldest:    desc("jobs_oldest_seconds", "Age of the oldest job in the queue's work stream (0 when none).", "queue"),
	}}
}

// AddJobs reports the job queue q from the next scrape on, labelled
// queue=name. It fails if name is taken or q is nil.
func (c *Collector) AddJobs(name string, q Jobs) error {
	if q == nil {
		return fmt.Errorf("poolprom: AddJobs(%q) of a nil queue", name)
	}
	j := c.jobs
	j.mu.Lock()
	defer j.mu.Unlock()
	if _, dup := j.queues[name]; dup {
		return fmt.Errorf("poolprom: a job queue named %q is added already", name)
	}
	j.queues[name] = q
	return nil
}

// RemoveJobs stops reporting the job queue named name (its series end).
func (c *Collector) RemoveJobs(name string) {
	c.jobs.mu.Lock()
	defer c.jobs.mu.Unlock()
	delete(c.jobs.queues, name)
}

func (j *jobQueues) describe(ch chan<- *prometheus.Desc) {
	d := &j.descs
	for _, desc := range []*prometheus.Desc{d.enqueued, d.started, d.succeeded, d.retried, d.dead, d.canceled, d.runTime, d.depth, d.oldest} {
		ch <- desc
	}
}

// collect reads each queue's Stats, queues in name order, and sends its
// metrics: a queue whose depth can't be read now (its server away)
// still has its counts sent, without the two gauges.
func (j *jobQueues) collect(ch chan<- prometheus.Metric) {
	j.mu.Lock()
	names := make([]string, 0, len(j.queues))
	for name := range j.queues {
		names = append(names, name)
	}
	sort.Strings(names)
	queues := make([]Jobs, len(names))
	for i, name := range names {
		queues[i] = j.queues[name]
	}
	j.mu.Unlock()
	for i, q := range queues {
		ctx, cancel := context.WithTimeout(context.Background(), jobsScrapeTimeout)
		st, err := q.Stats(ctx)
		cancel()
		j.send(ch, names[i], st, err == nil)
	}
}

func (j *jobQueues) send(ch chan<- prometheus.Metric, name string, st pool.JobStats, depth bool) {
	d := &j.descs
	if depth {
		ch <- prometheus.MustNewConstMetric(d.depth, prometheus.GaugeValue, float64(st.Depth), name)
		ch <- prometheus.MustNewConstMetric(d.oldest, prometheus.GaugeValue, st.Oldest.Seconds(), name)
	}
	for task, ts := range st.Tasks {
		for _, n := range []struct {
			desc *prometheus.Desc
			v    uint64
		}{{d.enqueued, ts.Enqueued}, {d.started, ts.Started}, {d.succeeded, ts.Succeeded},
			{d.retried, ts.Retried}, {d.dead, ts.Dead}, {d.canceled, ts.Canceled}} {
			ch <- prometheus.MustNewConstMetric(n.desc, prometheus.CounterValue, float64(n.v), name, task)
		}
		ch <- newHistogram(d.runTime, ts.RunTime, j.buckets, name, task)
	}
}
