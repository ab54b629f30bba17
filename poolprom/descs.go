package poolprom

import "github.com/prometheus/client_golang/prometheus"

// descs are a Collector's metric descriptors.
type descs struct {
	submitted, completed, failed, rejected, canceled *prometheus.Desc
	terminated, canceledOnNode, crashed, recycled    *prometheus.Desc
	workers, busy, queued, utilization               *prometheus.Desc
	queueWait, runTime                               *prometheus.Desc
	taskRuns, taskRunSeconds                         *prometheus.Desc
	nodeWorkers, nodeBusy, nodeInFlight, nodeAge     *prometheus.Desc
	shed, oldestRunning                              *prometheus.Desc
	slow, workersMax                                 *prometheus.Desc
	schedLatency                                     *prometheus.Desc
}

func newDescs(ns string) descs {
	pool := []string{"pool"}
	node := []string{"pool", "node"}
	desc := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc(prometheus.BuildFQName(ns, "", name), help, labels, nil)
	}
	return descs{
		submitted:      desc("submitted_total", "Tasks the pool accepted.", pool...),
		completed:      desc("completed_total", "Tasks whose caller got their result.", pool...),
		failed:         desc("failed_total", "Tasks whose caller got their error: returned, panicked, or their worker process died under them.", pool...),
		rejected:       desc("rejected_total", "Submissions refused: queue full, pool closed, unknown task, a done ctx.", pool...),
		canceled:       desc("canceled_total", "Tasks whose caller got a ctx error or ErrClosed instead of a result.", pool...),
		terminated:     desc("terminated_total", "Worker processes killed for a task whose caller gave up or whose pool closed and that did not return within TerminateGrace.", pool...),
		canceledOnNode: desc("canceled_on_node_total", "A Remote pool's tasks whose caller gave up while they ran on a node, which was told to cancel them.", pool...),
		crashed:        desc("crashed_total", "Worker processes that died on their own, and a Remote pool's nodes lost.", pool...),
		recycled:       desc("recycled_total", "Worker processes replaced after MaxTasksPerWorker tasks or by RecycleWorkers.", pool...),
		workers:        desc("workers", "Live workers, including those starting.", pool...),
		busy:           desc("busy_workers", "Workers running a task.", pool...),
		queued:         desc("queued_tasks", "Accepted tasks waiting for a worker.", pool...),
		utilization:    desc("utilization", "Workers' busy time over their lifetime, 0 to 1.", pool...),
		queueWait:      desc("queue_wait_seconds", "Time tasks spent in the queue (0 when handed straight to an idle worker).", pool...),
		runTime:        desc("run_seconds", "Time from a worker picking a task up to its return.", pool...),
		taskRuns:       desc("task_runs_total", "Tasks that ran, by name and by what their caller got.", "pool", "task", "outcome"),
		taskRunSeconds: desc("task_run_seconds_total", "Run time of the tasks that ran, by name.", "pool", "task"),
		nodeWorkers:    desc("node_workers", "A Remote pool's worker node: its slots, as it last advertised them.", node...),
		nodeBusy:       desc("node_busy_workers", "A Remote pool's worker node: its slots in use, as it last advertised them.", node...),
		nodeInFlight:   desc("node_inflight_tasks", "A Remote pool's worker node: this pool's tasks running on it now.", node...),
		nodeAge:        desc("node_advert_age_seconds", "A Remote pool's worker node: time since its last capacity advert.", node...),
		shed:           desc("shed_total", "Requests the pool's Shed middleware answered 503 before their handler ran, by reason.", "pool", "reason"),
		oldestRunning:  desc("oldest_running_seconds", "How long the longest-running task has been running (0 when none runs).", pool...),
		slow:           desc("slow_tasks_total", "Tasks that ran past the pool's SlowTaskAfter, counted as they passed it.", pool...),
		schedLatency:   desc("sched_latency_seconds", "The process's scheduling latency since it started: how long its runnable goroutines waited for a CPU (runtime/metrics /sched/latencies:seconds).", nil...),
		workersMax:     desc("workers_max", "The most tasks that may run at once now: Workers as SetWorkers last set it, capped by a Remote pool's live slots.", pool...),
	}
}

// each calls f on every descriptor.
func (d *descs) each(f func(*prometheus.Desc)) {
	for _, desc := range []*prometheus.Desc{
		d.submitted, d.completed, d.failed, d.rejected, d.canceled,
		d.terminated, d.canceledOnNode, d.crashed, d.recycled,
		d.workers, d.busy, d.queued, d.utilization,
		d.queueWait, d.runTime, d.taskRuns, d.taskRunSeconds,
		d.nodeWorkers, d.nodeBusy, d.nodeInFlight, d.nodeAge,
		d.shed, d.oldestRunning, d.slow, d.workersMax,
		d.schedLatency,
	} {
		f(desc)
	}
}
