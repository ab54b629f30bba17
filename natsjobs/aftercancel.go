package natsjobs

import "context"

// afterCancel tells the workers that job id is Canceled, and takes it
// out of the streams where it waits. Only the telling matters for the
// job: a worker that takes a canceled job finds it Canceled and drops
// it. So each of the rest is tried once, for publishTry at most: a
// stream electing its leader leaves its request unanswered, and Cancel
// would wait on it for as long as ctx allows.
func (q *Queue) afterCancel(ctx context.Context, id ID) {
	// A worker running the job hears it; one cut off from the server
	// runs it to its end, and its outcome is not written.
	_ = q.js.Conn().Publish(q.cancelSubject(), []byte(id))
	tctx, cancel := context.WithTimeout(ctx, publishTry)
	defer cancel()
	_ = q.unschedule(tctx, id) // a delayed job need not enter the queue
	// A job waiting in the stream need not count against MaxJobs
	// until a worker's delivery finds it Canceled.
	tctx, cancel = context.WithTimeout(ctx, publishTry)
	defer cancel()
	if m, err := q.queued(tctx, id); err == nil {
		_ = q.work.DeleteMsg(tctx, m.Sequence)
	}
}
