package poolotel

import (
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/offloadgo/offload/pool"
)

// instruments are the observable instruments of one meter.
type instruments struct {
	submitted, completed, failed, rejected, canceled metric.Int64ObservableCounter
	terminated, canceledOnNode, crashed, recycled    metric.Int64ObservableCounter
	workers, busy, queued                            metric.Int64ObservableGauge
	utilization, wait, run                           metric.Float64ObservableGauge
	waitTotal, runTotal                              metric.Float64ObservableCounter
	taskRuns                                         metric.Int64ObservableCounter
	taskRunTime                                      metric.Float64ObservableCounter
	nodeWorkers, nodeBusy, nodeInFlight              metric.Int64ObservableGauge
	nodeAge                                          metric.Float64ObservableGauge
	shed                                             metric.Int64ObservableCounter
	oldestRunning                                    metric.Float64ObservableGauge
	slow                                             metric.Int64ObservableCounter
	workersMax                                       metric.Int64ObservableGauge
	schedLatency                                     metric.Float64ObservableGauge
	all                                              []metric.Observable
}

func newInstruments(m metric.Meter) (*instruments, error) {
	var in instruments
	var errs []error
	counter := func(name, unit, desc string) metric.Int64ObservableCounter {
		c, err := m.Int64ObservableCounter(name, metric.WithUnit(unit), metric.WithDescription(desc))
		errs = append(errs, err)
		in.all = append(in.all, c)
		return c
	}
	gauge := func(name, unit, desc string) metric.Int64ObservableGauge {
		g, err := m.Int64ObservableGauge(name, metric.WithUnit(unit), metric.WithDescription(desc))
		errs = append(errs, err)
		in.all = append(in.all, g)
		return g
	}
	fgauge := func(name, unit, desc string) metric.Float64ObservableGauge {
		g, err := m.Float64ObservableGauge(name, metric.WithUnit(unit), metric.WithDescription(desc))
		errs = append(errs, err)
		in.all = append(in.all, g)
		return g
	}
	fcounter := func(name, unit, desc string) metric.Float64ObservableCounter {
		c, err := m.Float64ObservableCounter(name, metric.WithUnit(unit), metric.WithDescription(desc))
		errs = append(errs, err)
		in.all = append(in.all, c)
		return c
	}
	in.submitted = counter("offload.pool.tasks.submitted", "{task}", "Tasks the pool accepted.")
	in.completed = counter("offload.pool.tasks.completed", "{task}", "Tasks whose caller got their result.")
	in.failed = counter("offload.pool.tasks.failed", "{task}", "Tasks whose caller got their error.")
	in.rejected = counter("offload.pool.tasks.rejected", "{task}", "Submissions refused.")
	in.canceled = counter("offload.pool.tasks.canceled", "{task}", "Tasks whose caller got a ctx error or ErrClosed.")
	in.terminated = counter("offload.pool.workers.terminated", "{process}", "Worker processes killed for a task whose caller gave up and that did not return within TerminateGrace.")
	in.canceledOnNode = counter("offload.pool.tasks.canceled_on_node", "{task}", "A Remote pool's tasks whose caller gave up while they ran on a node, which was told to cancel them.")
	in.crashed = counter("offload.pool.workers.crashed", "{process}", "Worker processes that died on their own, and a Remote pool's nodes lost.")
	in.recycled = counter("offload.pool.workers.recycled", "{process}", "Worker processes replaced after MaxTasksPerWorker tasks or by RecycleWorkers.")
	in.workers = gauge("offload.pool.workers", "{worker}", "Live workers, including those starting.")
	in.busy = gauge("offload.pool.workers.busy", "{worker}", "Workers running a task.")
	in.queued = gauge("offload.pool.queue.length", "{task}", "Accepted tasks waiting for a worker.")
	in.utilization = fgauge("offload.pool.utilization", "1", "Workers' busy time over their lifetime.")
	in.wait = fgauge("offload.pool.queue.wait", "s", "Time tasks spent in the queue, by quantile.")
	in.run = fgauge("offload.pool.run.duration", "s", "Tasks' run time, by quantile.")
	in.waitTotal = fcounter("offload.pool.queue.wait.total", "s", "Time tasks spent in the queue, summed.")
	in.runTotal = fcounter("offload.pool.run.time.total", "s", "Tasks' run time, summed.")
	in.taskRuns = counter("offload.pool.task.runs", "{task}", "Tasks that ran, by name and by what their caller got.")
	in.taskRunTime = fcounter("offload.pool.task.run.time", "s", "Run time of the tasks that ran, by name.")
	in.nodeWorkers = gauge("offload.pool.node.workers", "{worker}", "A Remote pool's worker node: its slots, as it last advertised them.")
	in.nodeBusy = gauge("offload.pool.node.workers.busy", "{worker}", "A Remote pool's worker node: its slots in use, as it last advertised them.")
	in.nodeInFlight = gauge("offload.pool.node.inflight", "{task}", "A Remote pool's worker node: this pool's tasks running on it now.")
	in.nodeAge = fgauge("offload.pool.node.advert.age", "s", "A Remote pool's worker node: time since its last capacity advert.")
	in.shed = counter("offload.pool.shed", "{request}", "Requests the pool's Shed middleware answered 503 before their handler ran, by reason.")
	in.oldestRunning = fgauge("offload.pool.running.oldest", "s", "How long the longest-running task has been running (0 when none runs).")
	in.slow = counter("offload.pool.tasks.slow", "{task}", "Tasks that ran past the pool's SlowTaskAfter, counted as they passed it.")
	in.workersMax = gauge("offload.pool.workers.max", "{worker}", "The most tasks that may run at once now: Workers as SetWorkers last set it, capped by a Remote pool's live slots.")
	in.schedLatency = fgauge("offload.process.sched.latency", "s", "The process's scheduling latency since it started, by quantile: how long its runnable goroutines waited for a CPU.")
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return &in, nil
}

// observe reports st, for the pool whose attribute is poolAttr.
func (in *instruments) observe(o metric.Observer, poolAttr attribute.KeyValue, st pool.Stats) {
	attrs := metric.WithAttributes(poolAttr)
	o.ObserveInt64(in.submitted, int64(st.Submitted), attrs)
	o.ObserveInt64(in.completed, int64(st.Completed), attrs)
	o.ObserveInt64(in.failed, int64(st.Failed), attrs)
	o.ObserveInt64(in.rejected, int64(st.Rejected), attrs)
	o.ObserveInt64(in.canceled, int64(st.Canceled), attrs)
	o.ObserveInt64(in.terminated, int64(st.Terminated), attrs)
	o.ObserveInt64(in.canceledOnNode, int64(st.CanceledOnNode), attrs)
	o.ObserveInt64(in.crashed, int64(st.Crashed), attrs)
	o.ObserveInt64(in.recycled, int64(st.Recycled), attrs)
	o.ObserveInt64(in.slow, int64(st.Slow), attrs)
	o.ObserveInt64(in.workers, int64(st.Workers), attrs)
	o.ObserveInt64(in.workersMax, int64(st.MaxWorkers), attrs)
	o.ObserveInt64(in.busy, int64(st.Busy), attrs)
	o.ObserveInt64(in.queued, int64(st.Queued), attrs)
	o.ObserveFloat64(in.utilization, st.Utilization, attrs)
	o.ObserveFloat64(in.oldestRunning, st.OldestRunning.Seconds(), attrs)
	for _, reason := range []pool.ShedReason{pool.ShedClosed, pool.ShedQueueFull, pool.ShedMaxWait, pool.ShedDeadline, pool.ShedNoNode, pool.ShedLag} {
		label := strings.ReplaceAll(reason.String(), " ", "_")
		o.ObserveInt64(in.shed, int64(st.Shed.Count(reason)), metric.WithAttributes(poolAttr, attribute.String("reason", label)))
	}
	o.ObserveFloat64(in.waitTotal, st.WaitTime.Sum.Seconds(), attrs)
	o.ObserveFloat64(in.runTotal, st.RunTime.Sum.Seconds(), attrs)
	quantiles(o, in.wait, st.WaitTime, poolAttr)
	quantiles(o, in.run, st.RunTime, poolAttr)
	for task, ts := range st.Tasks {
		taskAttr := attribute.String("task", task)
		for _, r := range []struct {
			outcome string
			n       uint64
		}{{"completed", ts.Completed}, {"failed", ts.Failed}, {"canceled", ts.Canceled}} {
			o.ObserveInt64(in.taskRuns, int64(r.n), metric.WithAttributes(poolAttr, taskAttr, attribute.String("outcome", r.outcome)))
		}
		o.ObserveFloat64(in.taskRunTime, ts.RunTime.Seconds(), metric.WithAttributes(poolAttr, taskAttr))
	}
}

// observeNodes reports a Remote pool's worker nodes (none for another
// pool), as the nodes last reported them.
func (in *instruments) observeNodes(o metric.Observer, poolAttr attribute.KeyValue, nodes []pool.NodeStats) {
	for _, n := range nodes {
		attrs := metric.WithAttributes(poolAttr, attribute.String("node", n.ID))
		o.ObserveInt64(in.nodeWorkers, int64(n.Workers), attrs)
		o.ObserveInt64(in.nodeBusy, int64(n.Busy), attrs)
		o.ObserveInt64(in.nodeInFlight, int64(n.InFlight), attrs)
		o.ObserveFloat64(in.nodeAge, n.AdvertAge.Seconds(), attrs)
	}
}

// observeProcess reports what belongs to the process, not to a pool: its
// scheduling latency, with no pool attribute. Each registration observes
// the same values, so the last one read stands for them all.
func (in *instruments) observeProcess(o metric.Observer) {
	quantiles(o, in.schedLatency, pool.SchedLatency())
}

// quantiles reports s's P50, P90, P99 and Max, when it has samples, with
// attrs and the quantile.
func quantiles(o metric.Observer, g metric.Float64ObservableGauge, s pool.Summary, attrs ...attribute.KeyValue) {
	if s.Count == 0 {
		return
	}
	for _, q := range []struct {
		at float64
		v  float64
	}{{0.5, s.P50.Seconds()}, {0.9, s.P90.Seconds()}, {0.99, s.P99.Seconds()}, {1, s.Max.Seconds()}} {
		o.ObserveFloat64(g, q.v, metric.WithAttributes(append(attrs, attribute.Float64("quantile", q.at))...))
	}
}
