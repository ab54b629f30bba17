package poolotel

import (
	"context"
	"errors"
	"fmt"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/offloadgo/offload/pool"
)

// Jobs is a queue of durable jobs as RegisterJobs reads it:
// *natsjobs.Queue is one. It is an interface, over pool.JobStats, so
// that poolotel links no NATS into a program that runs no jobs.
type Jobs interface {
	// Stats returns the queue's counts and, unless it fails, its depth.
	Stats(ctx context.Context) (pool.JobStats, error)
}

// RegisterJobs reports the job queue q as the queue named name through
// meter until the returned Registration's Unregister. Each collection
// reads q.Stats under the reader's ctx: one request to the server for
// the depth, whose two gauges are left out when it fails. It fails if q
// is nil or meter refuses an instrument.
func RegisterJobs(meter metric.Meter, name string, q Jobs) (metric.Registration, error) {
	if q == nil {
		return nil, fmt.Errorf("poolotel: RegisterJobs(%q) of a nil queue", name)
	}
	in, err := newJobInstruments(meter)
	if err != nil {
		return nil, fmt.Errorf("poolotel: %w", err)
	}
	queueAttr := attribute.String("queue", name)
	return meter.RegisterCallback(func(ctx context.Context, o metric.Observer) error {
		st, err := q.Stats(ctx)
		in.observe(o, queueAttr, st, err == nil)
		return nil
	}, in.all...)
}

// jobInstruments are the observable instruments of job queues.
type jobInstruments struct {
	enqueued, started, succeeded, retried, dead, canceled metric.Int64ObservableCounter
	runTotal                                              metric.Float64ObservableCounter
	run                                                   metric.Float64ObservableGauge
	depth                                                 metric.Int64ObservableGauge
	oldest                                                metric.Float64ObservableGauge
	all                                                   []metric.Observable
}

func newJobInstruments(m metric.Meter) (*jobInstruments, error) {
	var in jobInstruments
	var errs []error
	counter := func(name, desc string) metric.Int64ObservableCounter {
		c, err := m.Int64ObservableCounter(name, metric.WithUnit("{job}"), metric.WithDescription(desc))
		errs = append(errs, err)
		in.all = append(in.all, c)
		return c
	}
	in.enqueued = counter("offload.jobs.enqueued", "Jobs this process stored (Enqueue), or sent back from dead (Retry), by task.")
	in.started = counter("offload.jobs.started", "Attempts this process's Serves began, by task.")
	in.succeeded = counter("offload.jobs.succeeded", "Jobs that ended Succeeded in this process, by task.")
	in.retried = counter("offload.jobs.retried", "Attempts that failed here and left the job for another, by task.")
	in.dead = counter("offload.jobs.dead", "Jobs that ended Dead in this process, by task.")
	in.canceled = counter("offload.jobs.canceled", "Jobs this process's Cancel ended, by task.")
	var err error
	in.runTotal, err = m.Float64ObservableCounter("offload.job.run.time.total", metric.WithUnit("s"),
		metric.WithDescription("Attempts' time in the pool, summed, by task."))
	errs = append(errs, err)
	in.run, err = m.Float64ObservableGauge("offload.job.run.duration", metric.WithUnit("s"),
		metric.WithDescription("Attempts' time in the pool, by task and quantile."))
	errs = append(errs, err)
	in.depth, err = m.Int64ObservableGauge("offload.jobs.depth", metric.WithUnit("{job}"),
		metric.WithDescription("Jobs in the queue's work stream: waiting, retrying or running."))
	errs = append(errs, err)
	in.oldest, err = m.Float64ObservableGauge("offload.jobs.oldest", metric.WithUnit("s"),
		metric.WithDescription("Age of the oldest job in the queue's work stream (0 when none)."))
	errs = append(errs, err)
	in.all = append(in.all, in.runTotal, in.run, in.depth, in.oldest)
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return &in, nil
}

// observe reports st, for the queue whose attribute is queueAttr; its
// depth only if it was read.
func (in *jobInstruments) observe(o metric.Observer, queueAttr attribute.KeyValue, st pool.JobStats, depth bool) {
	if depth {
		o.ObserveInt64(in.depth, int64(st.Depth), metric.WithAttributes(queueAttr))
		o.ObserveFloat64(in.oldest, st.Oldest.Seconds(), metric.WithAttributes(queueAttr))
	}
	for task, ts := range st.Tasks {
		taskAttr := attribute.String("task", task)
		attrs := metric.WithAttributes(queueAttr, taskAttr)
		for _, n := range []struct {
			c metric.Int64ObservableCounter
			v uint64
		}{{in.enqueued, ts.Enqueued}, {in.started, ts.Started}, {in.succeeded, ts.Succeeded},
			{in.retried, ts.Retried}, {in.dead, ts.Dead}, {in.canceled, ts.Canceled}} {
			o.ObserveInt64(n.c, int64(n.v), attrs)
		}
		o.ObserveFloat64(in.runTotal, ts.RunTime.Sum.Seconds(), attrs)
		quantiles(o, in.run, ts.RunTime, queueAttr, taskAttr)
	}
}
