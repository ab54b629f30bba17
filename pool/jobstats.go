package pool

import "time"

// JobStats is a snapshot of a queue of durable jobs, as
// natsjobs.Queue.Stats reads it. It is declared here, in a package that
// links no NATS, so that poolprom and poolotel report job queues through
// an interface without linking natsjobs into programs that have none.
type JobStats struct {
	// Depth is how many jobs the queue's work stream holds: waiting,
	// waiting out a retry's backoff, or running, as the server counts
	// them.
	Depth int
	// Oldest is the age of the oldest of them, since it was enqueued (0
	// when there is none): a job waiting for a worker, or one running
	// long, shows here.
	Oldest time.Duration
	// Tasks counts, by task name, what this process did with the queue's
	// jobs since it opened it: its Enqueues, and the attempts its Serves
	// ran. Other processes count their own; a metrics backend sums them.
	Tasks map[string]JobTaskStats
}

// JobTaskStats counts one task's jobs, as one process saw them. Each
// job counts once in Succeeded, Dead or Canceled, in the process that
// recorded its end.
type JobTaskStats struct {
	Enqueued  uint64 // jobs stored by Enqueue, and dead jobs sent back by Retry
	Started   uint64 // attempts begun
	Succeeded uint64 // jobs that ended Succeeded
	Retried   uint64 // attempts that failed and left the job for another
	Dead      uint64 // jobs that ended Dead
	Canceled  uint64 // jobs that ended Canceled (by this process's Cancel)
	// RunTime is the time in the pool, from submission to end, of each
	// attempt that ran here and ended Succeeded, Retried or Dead (not of
	// one canceled, or handed back by a stopping Serve).
	RunTime Summary
}
