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
// Cancel stops a job wherever it is: a queued one never runs, a running
// one has its ctx cancelled. When a Serve stops, its running jobs have
// ServeOptions.Drain to finish; the rest are cancelled and go back at
// once without using an attempt (to run again, from the start). A
// rolling restart of worker services loses no job, and runs none twice
// whose run fits in Drain.
//
// # Replicas and failover
//
// With Options.Replicas 3 on a cluster of three servers, each stream,
// bucket and the consumer is kept by all three, and the queue goes on
// while any one server is down: a stream whose leader died elects
// another within seconds, and a restarted server catches up. Meanwhile
// Open, Enqueue, Serve and the outcomes Serve writes try again while the
// server can't answer. Enqueue tries with the job's id, so the stream
// stores the job once however many tries reached it, until the job is
// stored, refused, or ctx (or a minute) ends. So an Enqueue error that
// matches ctx's error (context.DeadlineExceeded, context.Canceled) says
// the server did not confirm the store: the job may be stored and run,
// or not, and its Key, if any, is released, so enqueueing it again may
// run it twice. Any other Enqueue error means the job was not stored. A
// run whose outcome could not be written through a failover runs again
// as the job's next attempt (the contract above). Status and Wait read
// a job's record from its bucket's leader; a leader elected a moment ago
// may answer, for that moment, with a record older than one a Wait has
// heard of (Wait then reads again), so Status may lag a Wait by as much.
//
// # Design
//
// Queue "q" is, on its JetStream:
//   - the work stream OFFLOAD_JOBS_q, subjects offload.jobs.q.job.<id>: one
//     message per job waiting, retrying or running (work-queue retention,
//     MaxMsgs = MaxJobs with DiscardNew, so a full queue refuses at once).
//     Enqueue is its one publish, with the id as Nats-Msg-Id; the task's
//     name and the job's options are headers, the input the body, as
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
//
// Wait watches the status bucket, one watch per Queue: nothing polls per
// job. Cancel tells the Serves on offload.jobs.q.cancel (core NATS): a
// worker cut off from the server then runs the job to its end, and its
// outcome is not written over Canceled.
package natsjobs
