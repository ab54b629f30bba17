package pool

import "time"

// monoclock is a pool's clock for the times it keeps of its tasks and
// workers: nanoseconds on the monotonic clock since the pool was made.
// A reading is one time.Since, which reads the monotonic clock alone
// (time.Now reads the wall clock too), and a worker reuses the end of one
// task as the start of the next it takes from the queue (see take); a
// task handed to a parked worker costs two readings, its start and its
// end, the least an exact run time takes. Readings from different pools
// don't compare.
//
// Wall time never comes from it: a caller's deadline is wall time in
// its ctx, compared with time.Now (see callerEnd.pastDeadline).
type monoclock struct {
	// base is taken by New: in a synctest bubble, on the bubble's clock,
	// which every user of a pool made there reads too.
	base time.Time
}

func newMonoclock() monoclock { return monoclock{base: time.Now()} }

// now is the time since the pool was made, plus one: never 0, which the
// fields that hold a reading use for "no time" (a worker's startedAt
// while it parks, say), even in a synctest bubble whose clock has not
// moved since the pool was made.
func (c *monoclock) now() int64 { return int64(time.Since(c.base)) + 1 }
