package poolprom

import (
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/offloadgo/offload/pool"
)

// DefaultBuckets are the classic histogram bounds in seconds when
// Options.Buckets is nil: 10 µs to a minute, for work offloaded because
// it is slow.
var DefaultBuckets = []float64{
	0.00001, 0.00005, 0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 60,
}

// Options configure a Collector. The zero value is ready.
type Options struct {
	// Namespace prefixes every metric name; "" means "offload".
	Namespace string
	// Buckets are the classic histograms' upper bounds in seconds,
	// ascending; nil means DefaultBuckets.
	Buckets []float64
}

// Collector reports the Stats of the pools added to it. Make it with New.
type Collector struct {
	buckets []float64
	descs   descs

	mu    sync.Mutex
	pools map[string]*pool.Pool

	jobs *jobQueues // AddJobs
}

// New returns a Collector with no pools.
func New(o Options) *Collector {
	if o.Namespace == "" {
		o.Namespace = "offload"
	}
	if o.Buckets == nil {
		o.Buckets = DefaultBuckets
	}
	return &Collector{buckets: o.Buckets, descs: newDescs(o.Namespace), pools: map[string]*pool.Pool{},
		jobs: newJobQueues(o.Namespace, o.Buckets)}
}

// Add reports p from the next scrape on, labelled pool=name. It fails if
// name is taken or p is nil.
func (c *Collector) Add(name string, p *pool.Pool) error {
	if p == nil {
		return fmt.Errorf("poolprom: Add(%q) of a nil pool", name)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, dup := c.pools[name]; dup {
		return fmt.Errorf("poolprom: a pool named %q is added already", name)
	}
	c.pools[name] = p
	return nil
}

// Remove stops reporting the pool named name (its series end).
func (c *Collector) Remove(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.pools, name)
}

// Describe sends the descriptors of every metric the Collector can report.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	c.descs.each(func(d *prometheus.Desc) { ch <- d })
	c.jobs.describe(ch)
}

// Collect reads each pool's Stats and sends its metrics, pools in name
// order, then the process's scheduling latency (pool.SchedLatency), then
// each job queue's (AddJobs). It waits up to 5 s for each queue's depth.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	names := make([]string, 0, len(c.pools))
	for name := range c.pools {
		names = append(names, name)
	}
	pools := make([]*pool.Pool, len(names))
	sort.Strings(names)
	for i, name := range names {
		pools[i] = c.pools[name]
	}
	c.mu.Unlock()
	for i, p := range pools {
		c.collect(ch, names[i], p.Stats())
		c.collectNodes(ch, names[i], p.Nodes())
	}
	ch <- newHistogram(c.descs.schedLatency, pool.SchedLatency(), c.buckets)
	c.jobs.collect(ch)
}

// collectNodes sends the figures of a Remote pool's worker nodes (none
// for another pool), as the nodes last reported them.
func (c *Collector) collectNodes(ch chan<- prometheus.Metric, name string, nodes []pool.NodeStats) {
	d := &c.descs
	for _, n := range nodes {
		gauge := func(desc *prometheus.Desc, v float64) {
			ch <- prometheus.MustNewConstMetric(desc, prometheus.GaugeValue, v, name, n.ID)
		}
		gauge(d.nodeWorkers, float64(n.Workers))
		gauge(d.nodeBusy, float64(n.Busy))
		gauge(d.nodeInFlight, float64(n.InFlight))
		gauge(d.nodeAge, n.AdvertAge.Seconds())
	}
}

// collect sends one pool's metrics.
func (c *Collector) collect(ch chan<- prometheus.Metric, name string, st pool.Stats) {
	d := &c.descs
	counter := func(desc *prometheus.Desc, v uint64) {
		ch <- prometheus.MustNewConstMetric(desc, prometheus.CounterValue, float64(v), name)
	}
	gauge := func(desc *prometheus.Desc, v float64) {
		ch <- prometheus.MustNewConstMetric(desc, prometheus.GaugeValue, v, name)
	}
	counter(d.submitted, st.Submitted)
	counter(d.completed, st.Completed)
	counter(d.failed, st.Failed)
	counter(d.rejected, st.Rejected)
	counter(d.canceled, st.Canceled)
	counter(d.terminated, st.Terminated)
	counter(d.canceledOnNode, st.CanceledOnNode)
	counter(d.crashed, st.Crashed)
	counter(d.recycled, st.Recycled)
	counter(d.slow, st.Slow)
	gauge(d.workers, float64(st.Workers))
	gauge(d.workersMax, float64(st.MaxWorkers))
	gauge(d.busy, float64(st.Busy))
	gauge(d.queued, float64(st.Queued))
	gauge(d.utilization, st.Utilization)
	gauge(d.oldestRunning, st.OldestRunning.Seconds())
	for _, reason := range shedReasons {
		ch <- prometheus.MustNewConstMetric(d.shed, prometheus.CounterValue, float64(st.Shed.Count(reason)), name, reasonLabel(reason))
	}
	ch <- newHistogram(d.queueWait, st.WaitTime, c.buckets, name)
	ch <- newHistogram(d.runTime, st.RunTime, c.buckets, name)
	for task, ts := range st.Tasks {
		for _, o := range []struct {
			outcome string
			n       uint64
		}{{"completed", ts.Completed}, {"failed", ts.Failed}, {"canceled", ts.Canceled}} {
			ch <- prometheus.MustNewConstMetric(d.taskRuns, prometheus.CounterValue, float64(o.n), name, task, o.outcome)
		}
		ch <- prometheus.MustNewConstMetric(d.taskRunSeconds, prometheus.CounterValue, ts.RunTime.Seconds(), name, task)
	}
}

// shedReasons are the reasons Shed turns a request away.
var shedReasons = []pool.ShedReason{pool.ShedClosed, pool.ShedQueueFull, pool.ShedMaxWait, pool.ShedDeadline, pool.ShedNoNode, pool.ShedLag}

// reasonLabel is a reason as a label value: "queue_full", not "queue full".
func reasonLabel(r pool.ShedReason) string { return strings.ReplaceAll(r.String(), " ", "_") }
