// Package poolprom exports pools' Stats to Prometheus: a
// prometheus.Collector for one or more pools, each labelled pool="NAME".
//
// Register it once and add the pools it reports:
//
//	c := poolprom.New(poolprom.Options{})
//	c.Add("resize", resizePool)
//	prometheus.MustRegister(c)
//	http.Handle("/metrics", promhttp.Handler())
//
// Everything is read from Pool.Stats at scrape time (a few microseconds
// under each pool's lock per scrape): nothing is added to a task's path,
// so a pool costs the same with or without a collector. The metrics,
// with Options.Namespace (default "offload") as their prefix:
//
//   - counters: submitted, completed, failed, rejected, canceled,
//     canceled_on_node (tasks; the last a Remote pool's, whose caller gave
//     up while they ran on a node); terminated, crashed, recycled (worker
//     processes; crashed also counts a Remote pool's lost nodes) — each
//     NAMESPACE_<what>_total{pool} — and NAMESPACE_slow_tasks_total{pool}
//     (tasks that ran past pool.Options.SlowTaskAfter);
//   - NAMESPACE_shed_total{pool,reason}: requests the pool's Shed
//     middleware answered 503 before their handler ran, by reason
//     (closed, queue_full, max_wait, deadline, no_node, lag);
//   - gauges: NAMESPACE_workers, NAMESPACE_workers_max (the most tasks
//     that may run at once now: Workers as SetWorkers last set it, or a
//     Remote pool's live slots if fewer), NAMESPACE_busy_workers,
//     NAMESPACE_queued_tasks, NAMESPACE_utilization (busy time over
//     worker time, 0 to 1) and NAMESPACE_oldest_running_seconds (how long
//     the longest-running task has run: a task stuck on a ctx it ignores
//     shows here);
//   - histograms: NAMESPACE_queue_wait_seconds and NAMESPACE_run_seconds,
//     with classic buckets (Options.Buckets) and, for scrapers that ask
//     for them (the protobuf format), native buckets (schema 3: eight per
//     power of two, as the pool's own histograms are kept; their bounds
//     are the pool's, within 12.5%);
//   - NAMESPACE_sched_latency_seconds, with no pool label: the process's
//     scheduling latency since it started, how long its runnable
//     goroutines waited for a CPU (pool.SchedLatency), a histogram of the
//     same kinds whose bounds are the runtime's buckets (within about a
//     quarter) and whose sum counts each latency at its bucket's middle.
//     Beside a pool's queue_wait_seconds it tells the two kinds of
//     congestion apart: a pool short of workers, or a process short of
//     CPU (histogram_quantile(0.99, rate(...[1m])) for its recent p99);
//   - by task name: NAMESPACE_task_runs_total{pool,task,outcome} (outcome
//     completed, failed or canceled) and
//     NAMESPACE_task_run_seconds_total{pool,task};
//   - for a Remote pool, each worker node (pool.Pool.Nodes), as its
//     latest pong or answer says, up to a heartbeat old:
//     NAMESPACE_node_workers, NAMESPACE_node_busy_workers,
//     NAMESPACE_node_inflight_tasks (this pool's tasks on it) and
//     NAMESPACE_node_advert_age_seconds, each {pool,node};
//   - for each queue of durable jobs added with AddJobs (a
//     *natsjobs.Queue, taken through the Jobs interface so that poolprom
//     links no NATS), labelled queue="NAME": NAMESPACE_jobs_depth (jobs
//     in its work stream: waiting, retrying or running) and
//     NAMESPACE_jobs_oldest_seconds (the oldest one's age), read from
//     the server at scrape time and left out when it can't be asked;
//     and, by task, as this process counted them,
//     NAMESPACE_jobs_{enqueued,started,succeeded,retried,dead,canceled}_total{queue,task}
//     and the histogram NAMESPACE_job_run_seconds{queue,task} (each
//     attempt's time in its pool).
//
// A Collector is safe for concurrent use.
package poolprom
