package natsjobs

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/offloadgo/offload/internal/outcome"
	"github.com/offloadgo/offload/pool"
)

// claimTries bounds how often a claim re-reads a record that changed
// under it (a Cancel, say) before leaving the job for later.
const claimTries = 5

// claim starts an attempt: it writes the job's record Running with the
// attempt counted, over the revision it read. It reports false when the
// job is not to run (it has ended, its attempts are spent, or the server
// failed), having dealt with the message.
func (a *attempt) claim() bool {
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	if a.firstDelivery {
		// Most jobs have no record yet: write the first without reading.
		r := record{Task: a.task, Enqueued: a.enqueued, State: Running, Attempt: 1, Started: time.Now()}
		if rev, err := a.s.q.putRecord(ctx, a.id, r, 0); err == nil {
			a.rec, a.rev = r, rev
			return true
		}
	}
	for range claimTries {
		r, rev, err := a.s.q.record(ctx, a.id)
		switch {
		case errors.Is(err, ErrNotFound):
			r = record{Task: a.task, Enqueued: a.enqueued}
		case err != nil:
			_ = a.m.NakWithDelay(troubleWait)
			return false
		}
		a.rec, a.rev = r, rev
		switch {
		case r.State.final():
			_ = a.m.Ack() // ended before: a Cancel, or an ack that was lost
			return false
		case r.Attempt >= a.maxAttempts:
			a.bury(ctx, fmt.Sprintf("natsjobs: the worker running attempt %d of %d stopped heartbeating (killed, or paused past its lease); last error: %s",
				r.Attempt, a.maxAttempts, r.Err))
			return false
		}
		r.State, r.Attempt, r.Started, r.Finished = Running, r.Attempt+1, time.Now(), time.Time{}
		if rev, err = a.s.q.putRecord(ctx, a.id, r, rev); err == nil {
			a.rec, a.rev = r, rev
			return true
		}
	}
	_ = a.m.NakWithDelay(troubleWait)
	return false
}

// settle records how the attempt's run ended (out and err from the pool;
// cause, why its ctx ended) and acks, retries or buries the job.
func (a *attempt) settle(out any, err error, cause error) {
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	var pe *pool.PanicError
	switch {
	case errors.Is(context.Cause(a.ctx), errDrained):
		a.giveBack(0)
	case errors.Is(context.Cause(a.ctx), ErrCanceled):
		a.lostOwnership(ctx) // Cancel wrote the record
	case err == nil:
		b, err := encodeOutput(a.task, out)
		if err != nil {
			a.bury(ctx, err.Error())
			return
		}
		r := a.rec
		r.State, r.Out, r.Err, r.Finished = Succeeded, b, "", time.Now()
		a.write(ctx, r, func() { _ = a.m.Ack(); a.report(JobSucceeded, "") })
	case errors.As(err, &pe) || isPermanent(err) || hopeless(err):
		a.bury(ctx, err.Error())
	case a.rec.Attempt >= a.maxAttempts:
		a.bury(ctx, a.errText(err, cause))
	default:
		r := a.rec
		r.State, r.Err = Retrying, a.errText(err, cause)
		a.write(ctx, r, func() { _ = a.m.NakWithDelay(a.s.q.o.Backoff(r.Attempt, err)); a.report(JobRetried, r.Err) })
	}
}

// hopeless reports whether the pool's err is an end that another
// attempt would meet again: an input or output over the payload limit,
// a task that calls runtime.Goexit.
func hopeless(err error) bool {
	switch outcome.OfError(err).Kind {
	case outcome.TooLarge, outcome.Goexit:
		return true
	}
	return false
}

// errText is a failed attempt's error as recorded.
func (a *attempt) errText(err, cause error) string {
	if errors.Is(cause, errTimedOut) {
		return fmt.Sprintf("natsjobs: attempt %d timed out after %v: %v", a.rec.Attempt, a.timeout, err)
	}
	return err.Error()
}

// write puts r over the attempt's revision, then calls then; if the
// record changed meanwhile, the attempt has lost the job.
func (a *attempt) write(ctx context.Context, r record, then func()) {
	rev, err := a.s.q.putRecordThrough(ctx, a.id, r, a.rev)
	if err != nil {
		a.lostOwnership(ctx)
		return
	}
	a.rec, a.rev = r, rev
	then()
}

// bury ends the job Dead with text: it copies the job aside first, so
// that a job that reads as Dead can be listed and retried at once, then
// writes its record, then acks it.
func (a *attempt) bury(ctx context.Context, text string) {
	if !a.copyAside(ctx) {
		_ = a.m.NakWithDelay(troubleWait) // its next delivery buries it again
		return
	}
	r := a.rec
	r.State, r.Err, r.Out, r.Finished = Dead, text, nil, time.Now()
	a.write(ctx, r, func() { _ = a.m.Ack(); a.report(JobDead, text) })
}

// copyAside copies the job, input and all, to the dead stream, where it
// does not count against MaxJobs and Retry finds it. The stream keeps
// one copy per job: a copy made by an attempt that then lost the job
// is replaced by the next burial, and read by nobody (List and Retry
// go by the record).
func (a *attempt) copyAside(ctx context.Context) bool {
	msg := &nats.Msg{Subject: a.s.q.deadSubject(a.id), Data: a.m.Data(), Header: nats.Header{}}
	for _, k := range []string{headerTask, headerMaxAttempts, headerTimeout} {
		if v := a.m.Headers().Get(k); v != "" {
			msg.Header.Set(k, v)
		}
	}
	copyTrace(msg.Header, a.m.Headers())
	_, err := a.s.q.js.PublishMsg(ctx, msg, jetstream.WithMsgID(fmt.Sprintf("%s-%d", a.id, a.rev)))
	return err == nil
}

// giveBack undoes the claim's count (the run was not an attempt: the
// pool had no room, or the worker is stopping) and lets the job go back
// for another delivery after delay.
func (a *attempt) giveBack(delay time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	r := a.rec
	r.Attempt--
	if r.State = Retrying; r.Attempt == 0 {
		r.State = Queued
	}
	a.write(ctx, r, func() { _ = a.m.NakWithDelay(delay) })
}

// lostOwnership deals with a job whose record changed since this attempt
// claimed it: if the job has ended (a Cancel, say) its message is acked;
// if another attempt runs it (this worker lost its lease) the message is
// that attempt's and is left alone.
func (a *attempt) lostOwnership(ctx context.Context) {
	r, _, err := a.s.q.record(ctx, a.id)
	if err == nil && r.State.final() {
		_ = a.m.Ack()
	}
}
