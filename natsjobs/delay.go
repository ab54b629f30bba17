package natsjobs

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Delayed jobs (Delay, At) wait in the schedules stream
// OFFLOAD_JOBS_q_SCHEDULED as JetStream message schedules: a job's
// message on offload.jobs.q.scheduled.<id>, with the headers
// Nats-Schedule "@at <due>" and Nats-Schedule-Target
// offload.jobs.q.due.<id>. When it falls due the server stores the job
// (body and headers) on its target in the same stream and drops the
// schedule; the work stream sources the due subjects, renamed onto its
// job subjects, so the job enters the queue as if enqueued then.
//
// Why a stream of their own: JetStream refuses schedules on a stream
// that discards new messages (the work stream does, for MaxJobs), and a
// schedule's target must be in the schedule's stream. Sourcing into the
// full work stream fails as a publish would; the server then sets the
// source up again from that job every 2 s or so, so due jobs wait, in
// order, and enter as room frees. A due job's message stays in the
// schedules stream for Retention (its Nats-Schedule-TTL): long enough to
// wait for room, and bounded. The work stream keeps no per-message TTL
// (AllowMsgTTL off), so the TTL the sourced copy carries does nothing
// there.

// The schedule headers of nats-server's message schedules.
const (
	headerSchedule       = "Nats-Schedule"
	headerScheduleTarget = "Nats-Schedule-Target"
	headerScheduleTTL    = "Nats-Schedule-TTL"
)

func (q *Queue) scheduledSubject(id ID) string {
	return "offload.jobs." + q.o.Name + ".scheduled." + string(id)
}

func (q *Queue) dueSubject(id ID) string {
	return "offload.jobs." + q.o.Name + ".due." + string(id)
}

// schedulesStreamConfig is the schedules stream of the queue o names.
func schedulesStreamConfig(o Options) jetstream.StreamConfig {
	return jetstream.StreamConfig{
		Name:     schedulesStreamName(o.Name),
		Subjects: []string{subjectsOf(o.Name) + "scheduled.*", subjectsOf(o.Name) + "due.*"},
		// Limits, with none set: DiscardNew is refused with schedules,
		// and DiscardOld would drop scheduled jobs.
		Retention:         jetstream.LimitsPolicy,
		AllowMsgSchedules: true,
		AllowMsgTTL:       true, // for the due jobs' Nats-Schedule-TTL
		AllowRollup:       true, // schedules roll up their subject
		Storage:           jetstream.FileStorage,
		Replicas:          o.Replicas,
		Duplicates:        2 * time.Minute,
	}
}

// schedulesSupported says whether the server keeps message schedules in
// the schedules stream s: a server before 2.12 ignores the setting, and
// would keep schedules as plain messages that never fall due.
func schedulesSupported(s jetstream.Stream, queue string) error {
	if !s.CachedInfo().Config.AllowMsgSchedules {
		return fmt.Errorf("natsjobs: queue %q: the server has no message schedules (nats-server 2.12 or later has)", queue)
	}
	return nil
}

// dueSources is the work stream's source of due jobs, for queue:
// offload.jobs.q.due.<id> lands on offload.jobs.q.job.<id>.
func dueSources(queue string) []*jetstream.StreamSource {
	return []*jetstream.StreamSource{{
		Name: schedulesStreamName(queue),
		SubjectTransforms: []jetstream.SubjectTransformConfig{{
			Source:      subjectsOf(queue) + "due.*",
			Destination: subjectsOf(queue) + "job.{{wildcard(1)}}",
		}},
	}}
}

// due is when a job enqueued now with options o is due; the zero time
// means now. A negative Delay is an error.
func (o enqueueOptions) due(now time.Time) (time.Time, error) {
	if o.delay < 0 {
		return time.Time{}, fmt.Errorf("negative Delay %v", o.delay)
	}
	t := o.at
	if o.delay > 0 {
		t = now.Add(o.delay)
	}
	if !t.After(now) {
		return time.Time{}, nil
	}
	return t, nil
}

// schedule turns msg, job id as Enqueue would store it in the work
// stream, into its schedule: the server stores it there at due.
func (q *Queue) schedule(msg *nats.Msg, id ID, due time.Time) {
	msg.Subject = q.scheduledSubject(id)
	// The server reads RFC 3339 with the fraction, and fires once its
	// clock passes due: never before.
	msg.Header.Set(headerSchedule, "@at "+due.UTC().Format(time.RFC3339Nano))
	msg.Header.Set(headerScheduleTarget, q.dueSubject(id))
	msg.Header.Set(headerScheduleTTL, strconv.FormatInt(int64(max(q.o.Retention, time.Second)/time.Second), 10))
}

// scheduled returns id's message in the schedules stream: its schedule,
// or, once due and until the work stream has it, the due job.
func (q *Queue) scheduled(ctx context.Context, id ID) (*jetstream.RawStreamMsg, error) {
	// One read for both subjects: a job moving from one to the other is
	// in one of them.
	m, err := q.delayed.GetLastMsgForSubject(ctx, "offload.jobs."+q.o.Name+".*."+string(id))
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("natsjobs: job %s: %w", id, err)
	}
	return m, nil
}

// waiting returns job id's message while no worker has taken it: in the
// work stream, or in the schedules stream.
func (q *Queue) waiting(ctx context.Context, id ID) (*jetstream.RawStreamMsg, error) {
	m, err := q.queued(ctx, id)
	if errors.Is(err, ErrNotFound) {
		m, err = q.scheduled(ctx, id)
	}
	return m, err
}

// waitingState is the state of a job whose message m is waiting: in
// the schedules stream before it is due, Scheduled; else Queued.
func (q *Queue) waitingState(m *jetstream.RawStreamMsg) State {
	if strings.HasPrefix(m.Subject, q.scheduledSubject("")) {
		return Scheduled
	}
	return Queued
}

// unschedule drops job id from the schedules stream (its schedule, or
// its due job waiting for room), so that it never enters the queue.
func (q *Queue) unschedule(ctx context.Context, id ID) error {
	err := q.delayed.Purge(ctx, jetstream.WithPurgeSubject("offload.jobs."+q.o.Name+".*."+string(id)))
	if err != nil {
		return fmt.Errorf("natsjobs: unschedule job %s: %w", id, err)
	}
	return nil
}
