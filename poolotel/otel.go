// Package poolotel reports pools' Stats as OpenTelemetry metrics, through
// any go.opentelemetry.io/otel/metric Meter, and follows tasks with spans
// across processes and nodes (NewTracer).
//
//	reg, err := poolotel.Register(otel.Meter("myservice"), "resize", resizePool)
//	defer reg.Unregister()
//
// Like package poolprom it reads Pool.Stats when the reader collects, so
// it adds nothing to a task's path. Every instrument is observable, and
// all but the process's scheduling latency carry the attribute pool=NAME:
//
//   - counters offload.pool.tasks.{submitted,completed,failed,rejected,canceled,canceled_on_node,slow}
//     (canceled_on_node: a Remote pool's tasks whose caller gave up while
//     they ran on a node; slow: tasks that ran past
//     pool.Options.SlowTaskAfter) and
//     offload.pool.workers.{terminated,crashed,recycled} (crashed also
//     counts a Remote pool's lost nodes);
//   - gauges offload.pool.workers, offload.pool.workers.max (the most
//     tasks that may run at once now: Workers as SetWorkers last set it,
//     or a Remote pool's live slots if fewer), offload.pool.workers.busy,
//     offload.pool.queue.length, offload.pool.utilization and
//     offload.pool.running.oldest (seconds the longest-running task has
//     run: a task stuck on a ctx it ignores shows here);
//   - the counter offload.pool.shed{reason}: requests the pool's Shed
//     middleware answered 503 before their handler ran (reason closed,
//     queue_full, max_wait, deadline, no_node or lag);
//   - offload.pool.queue.wait and offload.pool.run.duration, gauges in
//     seconds with the attribute quantile (0.5, 0.9, 0.99, 1 for the
//     maximum) — OpenTelemetry has no observable histogram, and a pool's
//     histograms are kept by the pool, not recorded through the Meter —
//     and the counters offload.pool.queue.wait.total and
//     offload.pool.run.time.total (seconds), whose rates give the means;
//   - beside them, with no pool attribute, the gauge
//     offload.process.sched.latency{quantile}: the process's scheduling
//     latency since it started, how long its runnable goroutines waited
//     for a CPU (pool.SchedLatency) — a pool short of workers shows in
//     its queue wait, a process short of CPU here;
//   - by task name, offload.pool.task.runs{task,outcome} and
//     offload.pool.task.run.time{task};
//   - for a Remote pool, each worker node (pool.Pool.Nodes), as its
//     latest pong or answer says: gauges offload.pool.node.workers,
//     offload.pool.node.workers.busy, offload.pool.node.inflight (this
//     pool's tasks on it) and offload.pool.node.advert.age (seconds),
//     each with the attribute node=ID;
//   - for each queue of durable jobs registered with RegisterJobs (a
//     *natsjobs.Queue, taken through the Jobs interface so that poolotel
//     links no NATS), with the attribute queue=NAME: gauges
//     offload.jobs.depth (jobs in its work stream: waiting, retrying or
//     running) and offload.jobs.oldest (seconds: the oldest one's age),
//     read from the server as the reader collects and left out when it
//     can't be asked; and, by task (attribute task), as this process
//     counted them, the counters
//     offload.jobs.{enqueued,started,succeeded,retried,dead,canceled},
//     and each attempt's time in its pool as pool's run time is reported:
//     the gauge offload.job.run.duration{quantile} and the counter
//     offload.job.run.time.total (seconds).
//
// For histograms with buckets, use package poolprom.
//
// NewTracer makes a pool.Tracer: set in pool.Options.Tracer, it gives each
// task a span under the caller's and sends the caller's trace context
// (W3C traceparent, tracestate and baggage) with every Subprocess and
// Remote call; given to pool.Main or natsremote.Main, it hands that
// context to the task in the worker process or on the node, so that
// trace.SpanContextFromContext(ctx) there has the caller's trace ID. The
// same Tracer, in natsjobs.Options.Tracer, keeps an enqueuer's trace
// context with each durable job and continues it where the job runs.
package poolotel

import (
	"context"
	"fmt"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/offloadgo/offload/pool"
)

// Register reports p as the pool named name through meter until the
// returned Registration's Unregister. It fails if p is nil or meter
// refuses an instrument.
func Register(meter metric.Meter, name string, p *pool.Pool) (metric.Registration, error) {
	if p == nil {
		return nil, fmt.Errorf("poolotel: Register(%q) of a nil pool", name)
	}
	in, err := newInstruments(meter)
	if err != nil {
		return nil, fmt.Errorf("poolotel: %w", err)
	}
	poolAttr := attribute.String("pool", name)
	return meter.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		in.observe(o, poolAttr, p.Stats())
		in.observeNodes(o, poolAttr, p.Nodes())
		in.observeProcess(o)
		return nil
	}, in.all...)
}
