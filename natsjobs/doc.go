// Package natsjobs runs durable jobs on NATS JetStream: work of seconds
// or minutes that a service accepts with an id (Enqueue), that worker
// services run through a pool of the same pool.Register'ed tasks (Serve),
// that is retried on failure and survives a deploy or a server restart,
// and whose status and result are kept by id for a while (Status, Wait).
//
// # The contract: at least once
//
// A job ends in exactly one final state: Succeeded, Dead or Canceled.
// A job whose worker is alive never runs twice: the worker renews the
// job's lease (Options.Lease) every third of it while the task runs,
// however long. A job whose worker stops renewing (killed, paused, cut
// off from the server) runs again on another worker once its lease
// passes, as its next attempt: so a task may run more than once, and
// should be idempotent — key its side effects by the job's id (or its
// own key), or check whether they were made before making them. A
// worker that lost its lease and comes back can't overwrite the outcome
// of the attempt that replaced it: every outcome is written over the
// revision of the status record its attempt wrote when it started.
//
// A task's error is retried, after Options.Backoff, until the job's
// attempts are spent; then, or at once for a Permanent error, a panic,
// an input that doesn't decode, an input or output over the pool's
// payload limit or a runtime.Goexit, the job is Dead with the error's text,
// kept for Retention, listed by List and run again by Retry. An
// attempt's Timeout is the deadline of the task's ctx. A job of a task
// the worker's binary lacks goes back, without using an attempt, for a
// worker that has it (Dead after an hour without one). Messages on the
// jobs' subjects that are no job are logged and dropped, never retried.
//
// A job enqueued with Delay or At is Scheduled until due, starts no
// sooner, and survives a server restart. Until due it doesn't count
// against MaxJobs; a job that falls due while the queue is full waits,
// Queued, and enters when there is room (within a few seconds of it).
//
// Cancel stops a job wherever it is: a scheduled or queued one never
// runs, a running one has its ctx cancelled. When a Serve stops, its
// running jobs have ServeOptions.Drain to finish; the rest are cancelled
// and go back at once without using an attempt (to run again, from the
// start). A rolling restart of worker services loses no job, and runs
// none twice whose run fits in Drain.
//
// # Watching a queue
//
// Each job's life is a series of JobEvents (enqueued, started, then
// succeeded, retried, dead or canceled), logged through Options.Logger
// and handed to Options.OnJobEvent by the process where each happens.
// Queue.Stats counts them by task, with each attempt's run time, and
// reads the work stream's depth and its oldest job's age from the
// server; poolprom.Collector.AddJobs and poolotel.RegisterJobs export
// them. With Options.Tracer, a job keeps its enqueuer's trace context
// and its task runs in that trace, wherever its pool runs it.
//
// # Design
//
// Queue "q" is, on its JetStream:
//   - the work stream OFFLOAD_JOBS_q, subjects offload.jobs.q.job.<id>: one
//     message per job waiting, retrying or running (work-queue retention,
//     MaxMsgs = MaxJobs with DiscardNew, so a full queue refuses at once).
//     Enqueue is its one publish, with the id as Nats-Msg-Id; the task's
//     name, the job's options and the enqueuer's trace context
//     (Offload-Trace-*) are headers, the input the body, as
//     msgpack with struct fields by name (so a queued job still decodes
//     into an In that gained or lost a field). msgpack rather than JSON:
//     a task's In and Out already cross to worker processes as msgpack
//     (Register's contract), []byte stays bytes, and the codec decodes
//     bytes from elsewhere with bounded lengths and depth.
//   - its durable pull consumer "workers", shared by every Serve: AckWait
//     is the lease, renewed with InProgress; it redelivers without limit,
//     since attempts are counted in the status record, not by deliveries
//     (a full pool or a worker lacking the task makes deliveries too).
//   - the status bucket OFFLOAD_JOBS_q_STATUS (TTL Retention): a job's
//     record by id, absent while the job is queued (Status then reads the
//     work stream). A worker's claim writes it Running with the attempt
//     counted; the attempt's outcome (Succeeded with the output, Retrying
//     with the error, then NakWithDelay; Dead) is written over the
//     claim's revision before the message is acked, so a crash between
//     the two leaves a record the next delivery finishes from.
//   - the dead stream OFFLOAD_JOBS_q_DEAD (MaxAge Retention, one message
//     per subject), offload.jobs.q.dead.<id>: dead jobs' messages, copied
//     there before the record says Dead and then acked out of the work
//     stream, so they don't count against MaxJobs.
//   - the key bucket OFFLOAD_JOBS_q_KEYS (TTL Retention): Key → id.
//   - the schedules stream OFFLOAD_JOBS_q_SCHEDULED: delayed jobs, each a
//     JetStream message schedule on offload.jobs.q.scheduled.<id>, which
//     the server stores on offload.jobs.q.due.<id> when due (kept there
//     for Retention). The work stream sources the due subjects onto its
//     job subjects. A stream of their own, because JetStream refuses
//     schedules on a stream that discards new messages and wants a
//     schedule's target in its own stream; and it can't be bounded
//     without dropping schedules, so scheduled jobs count against
//     MaxJobs only once due. Sourcing into the full work stream fails as
//     a publish would, and the server tries again from that job every
//     2 s or so: due jobs wait in order.
//
// Wait watches the status bucket, one watch per Queue: nothing polls per
// job. Cancel tells the Serves on offload.jobs.q.cancel (core NATS): a
// worker cut off from the server then runs the job to its end, and its
// outcome is not written over Canceled.
package natsjobs
