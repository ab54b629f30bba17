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
// payload limit, an output that can't be stored (one holding a
// *transfer.Buffer, which Serve releases) or a runtime.Goexit, the job
// is Dead with the error's text, kept for Retention, listed by List and
// run again by Retry. An attempt's Timeout is the deadline of the
// task's ctx. A job of a task the worker's binary lacks goes back,
// without using an attempt, for a worker that has it (Dead after an hour
// without one). Messages on the jobs' subjects that are no job are
// logged and dropped, never retried.
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
// # Replicas and failover
//
// With Options.Replicas 3 on a cluster of three servers, each stream,
// bucket and the consumer is kept by all three, and the queue goes on
// while any one server is down: a stream whose leader died elects
// another within seconds, and a restarted server catches up. Meanwhile
// Open, Enqueue, Serve, Cancel and the outcomes Serve writes try again
// while the server can't answer. Enqueue tries with the job's id, so the stream
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
// job. The watch is renewed each time the connection reconnects (a
// restarted server has lost its consumer), and every Wait then reads its
// job's record again, its read in flight included. Cancel tells the Serves on offload.jobs.q.cancel (core NATS): a
// worker cut off from the server then runs the job to its end, and its
// outcome is not written over Canceled.
//
// # Trust and permissions
//
// On a NATS system with authorization, a queue has three roles, each a
// NATS user with the permissions its function lists (for nats-server's
// authorization block, or embedded.User):
//   - AdminPermissions makes the queue and operates it: its Open creates
//     the streams, buckets and consumer and updates them to its Options;
//     Cancel, Retry, List and AdminHandler, an operator's acts, are its
//     alone. Open the queue as the admin once before the others start,
//     and again when its Options change.
//   - EnqueuerPermissions is for the services that accept work: Open,
//     Enqueue (Key, Delay and At included), Status and Wait, so Accept
//     and StatusHandler.
//   - WorkerPermissions is for the worker services: Open and Serve.
//
// Each function returns the subjects its user may publish and subscribe
// to, for nats-server's authorization block (their examples print it for
// a queue) or for an embedded server:
//
//	p := natsjobs.WorkerPermissions("reports", "")
//	users = append(users, embedded.User{Name: "worker", Password: pw, Publish: p.Publish, Subscribe: p.Subscribe})
//
// An enqueuer's or a worker's Open binds to what the admin made and
// creates nothing; something missing fails it at once, with an error
// that names it and AdminPermissions. What a role must not do the server
// refuses: an enqueuer can't take, ack, cancel or retry a job, write a
// status, or touch a stream; a worker can't enqueue, write a Key,
// cancel, nor make, change, purge or delete a stream or the consumer; an
// admin can't touch another queue's streams. NATS tells a client of such
// a refusal only in an asynchronous error, so a refused Enqueue, Cancel
// or Retry fails after one try (a few seconds), with an error matching
// nats.ErrPermissionViolation; a refused Status, Wait or Key claim waits
// out its ctx.
//
// NATS grants rights by subject, not by job, so each role can do its
// acts to every job of the queue:
//   - A worker's user can write any job's status record, and ack any
//     message the consumer has delivered, to it or to another worker
//     (an ack's subject can be guessed). This package's workers write
//     an attempt's outcome only over the revision of the attempt's claim,
//     so a worker that lost its lease can't overwrite the attempt that
//     replaced it; but whoever holds a worker's credentials can write
//     without that condition: mark any job Succeeded with an output of
//     their making, or Dead; drop the jobs delivered to them; and put in
//     the dead stream a job of their making, which an operator's Retry
//     then enqueues. Workers are trusted with the queue's jobs, as a
//     pool's nodes are with their calls. Only a trusted service that
//     alone may write the status bucket, taking outcomes from workers and
//     checking each against its attempt's claim, would close this; the
//     package has none.
//   - An enqueuer's user can read every job's status and output (Wait's
//     watch sees the whole status bucket), enqueue any task, and point
//     any Key at an id of its choosing. The watch's rights let it make
//     consumers of the status bucket, which deliver its records on a
//     subject of its choosing (the server checks that subject for
//     cycles, not against the user's rights): give each application a
//     NATS account of its own.
//
// The permissions assume the default JetStream API prefix ($JS.API) and
// no JetStream domain; the server's acks may have either form (its v2
// ack format included).
package natsjobs
