package natsjobs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/offloadgo/offload/internal/codec"
)

// Queue is a queue of durable jobs on JetStream, bound by Open (its zero
// value is not usable). Safe for concurrent use. Close it when done: it
// ends the watch that Waits share, and the Serves of it.
type Queue struct {
	o        Options
	js       jetstream.JetStream
	work     jetstream.Stream
	dead     jetstream.Stream
	delayed  jetstream.Stream // jobs not yet due (delay.go)
	workers  jetstream.Consumer
	statuses jetstream.KeyValue
	keys     jetstream.KeyValue
	subject  string // the work stream's subject prefix: subject + id
	// unknownTaskGrace is how long a job may wait for a worker that has
	// its task: unknownTaskGrace, but for tests.
	unknownTaskGrace time.Duration
	// keyWaits, for tests, hears each time an Enqueue waits for a Key's
	// first job to be stored (see claimKey).
	keyWaits chan<- ID

	watch  watcher
	counts counters // what this process did with the jobs (Stats)
	// outputs decodes an output by its task's name, through the Out type
	// an Accept of the task knows (see StatusHandler).
	outputs sync.Map // string → func([]byte) (any, error)
	// life ends with Close: Serves stop pulling then.
	life    context.Context
	closeMe context.CancelFunc
}

// Open binds the queue o.Name on nc's JetStream and returns it. It looks
// up the queue's streams, buckets and consumer, creates those missing,
// and updates those whose settings differ from o's, each only where nc's
// user may: so the user of AdminPermissions makes the queue, and one of
// EnqueuerPermissions or WorkerPermissions binds to what it made. Where
// that user finds the settings different from o's and may not update
// them, they hold, and the Queue follows them (its Options' MaxJobs,
// MaxBytes, Retention, Replicas and Lease become theirs); NATS tells nc's
// error handler of the refused update. Something missing that nc's user
// may not create, or may not look up, fails Open at once (not when ctx
// ends) with an error matching nats.ErrPermissionViolation that names it
// and the permissions that make it. It blocks on the server for as long
// as ctx allows, trying again while the server can't answer (JetStream
// electing a leader).
func Open(ctx context.Context, nc *nats.Conn, o Options) (*Queue, error) {
	return through(ctx, opTimeout, func(ctx context.Context) (*Queue, error) { return bind(ctx, nc, o) })
}

// bind is one try of Open.
func bind(ctx context.Context, nc *nats.Conn, o Options) (*Queue, error) {
	o, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, fmt.Errorf("natsjobs: %w", err)
	}
	q := &Queue{o: o, js: js, subject: subjectsOf(o.Name) + "job.", unknownTaskGrace: unknownTaskGrace}
	q.watch.q = q
	b := binder{nc: nc, js: js, o: o}
	// The schedules stream first: the work stream sources it.
	if q.delayed, err = b.stream(ctx, schedulesStreamConfig(o), "schedules stream"); err != nil {
		return nil, err
	}
	if err := schedulesSupported(q.delayed, o.Name); err != nil {
		return nil, err
	}
	if q.work, err = b.stream(ctx, workStreamConfig(o), "work stream"); err != nil {
		return nil, err
	}
	if q.dead, err = b.stream(ctx, deadStreamConfig(o), "dead stream"); err != nil {
		return nil, err
	}
	if q.workers, err = b.consumer(ctx, q.work, workersConsumerConfig(o), "consumer"); err != nil {
		return nil, err
	}
	if q.statuses, err = b.bucket(ctx, statusBucketConfig(o), "status bucket"); err != nil {
		return nil, err
	}
	if q.keys, err = b.bucket(ctx, keyBucketConfig(o), "key bucket"); err != nil {
		return nil, err
	}
	q.o = adopt(o, q.work, q.dead, q.workers)
	q.life, q.closeMe = context.WithCancel(context.Background())
	return q, nil
}

// Close ends the queue's watch: Waits still waiting return
// ErrQueueClosed, and Serves stop (see Serve). It does not close the
// connection. Idempotent.
func (q *Queue) Close() error {
	q.closeMe()
	q.watch.close()
	return nil
}

// ErrQueueClosed is the error of a Wait on a closed Queue.
var ErrQueueClosed = errors.New("natsjobs: queue closed")

// cancelSubject is where Cancel tells the Serves of a cancelled job's id
// (core NATS: a Serve that misses it runs the job to its end, and the
// job stays Canceled).
func (q *Queue) cancelSubject() string { return subjectsOf(q.o.Name) + "cancel" }

func (q *Queue) deadSubject(id ID) string {
	return subjectsOf(q.o.Name) + "dead." + string(id)
}

// The job message's headers, besides Nats-Msg-Id (its id).
const (
	headerTask        = "Offload-Task"
	headerMaxAttempts = "Offload-Max-Attempts"
	headerTimeout     = "Offload-Timeout"
)

// record is a job's status record in the status bucket, keyed by its id.
// A job has none while Queued (the work stream has it); a worker writes
// one when an attempt starts, and the attempt's outcome over it,
// conditionally on its revision (see claim).
type record struct {
	Task     string    `msgpack:"task"`
	State    State     `msgpack:"state"`
	Attempt  int       `msgpack:"attempt"`
	Err      string    `msgpack:"err,omitempty"`
	Enqueued time.Time `msgpack:"enqueued"`
	Started  time.Time `msgpack:"started,omitempty"`
	Finished time.Time `msgpack:"finished,omitempty"`
	Out      []byte    `msgpack:"out,omitempty"` // the output's encoding, once Succeeded
}

func (r record) status(id ID) Status {
	return Status{ID: id, Task: r.Task, State: r.State, Attempt: r.Attempt, Err: r.Err,
		Enqueued: r.Enqueued, Started: r.Started, Finished: r.Finished}
}

// encodeByName is the msgpack of v with structs as maps by field name:
// a job's input and output may be decoded by another build, whose types
// have gained or lost a field (the pool's codec sends structs as arrays,
// by position, between the two ends of one build).
func encodeByName(v any) (b []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("msgpack panicked: %v", r)
		}
	}()
	var buf bytes.Buffer
	enc := msgpack.NewEncoder(&buf)
	enc.UseArrayEncodedStructs(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func decodeRecord(b []byte) (record, error) {
	var r record
	if err := codec.Unmarshal(b, &r); err != nil {
		return r, fmt.Errorf("natsjobs: a corrupt status record: %w", err)
	}
	return r, nil
}

// record returns id's status record and its revision, as the status
// bucket's leader has them (see latest); ErrNotFound if it has none.
func (q *Queue) record(ctx context.Context, id ID) (record, uint64, error) {
	b, rev, err := q.latest(ctx, id)
	if err != nil {
		return record{}, 0, err
	}
	r, err := decodeRecord(b)
	return r, rev, err
}

// putRecord writes id's record over revision rev (0: where it has none),
// and returns the new revision. It fails with jetstream.ErrKeyExists (or
// a wrong-sequence error) if rev is not the last.
func (q *Queue) putRecord(ctx context.Context, id ID, r record, rev uint64) (uint64, error) {
	b, err := encodeByName(r)
	if err != nil {
		return 0, err
	}
	if rev == 0 {
		return q.statuses.Create(ctx, string(id), b)
	}
	return q.statuses.Update(ctx, string(id), b, rev)
}

// queued returns the work stream's message for id, if it holds one.
func (q *Queue) queued(ctx context.Context, id ID) (*jetstream.RawStreamMsg, error) {
	m, err := q.work.GetLastMsgForSubject(ctx, q.subject+string(id))
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("natsjobs: job %s: %w", id, err)
	}
	return m, nil
}

// Status returns what is known of job id: ErrNotFound if it is unknown
// or its Retention has passed. It reads again what the server could not
// answer (a leader election, a reconnect), for as long as ctx allows.
func (q *Queue) Status(ctx context.Context, id ID) (Status, error) {
	if !validID(id) {
		return Status{}, ErrNotFound
	}
	// Each try is bounded: a read sent to a bucket without a leader is
	// never answered.
	return through(ctx, publishTry, func(ctx context.Context) (Status, error) {
		st, _, err := q.status(ctx, id)
		return st, err
	})
}

// status is id's Status and, once it has one, its record.
func (q *Queue) status(ctx context.Context, id ID) (Status, record, error) {
	r, queued, err := q.lookup(ctx, id)
	switch {
	case err != nil:
		return Status{}, r, err
	case queued != nil:
		return Status{ID: id, Task: queued.Header.Get(headerTask), State: q.waitingState(queued), Enqueued: queued.Time}, r, nil
	}
	return r.status(id), r, nil
}

// lookup returns id's record, or, while it has none, its message in the
// work stream or the schedules stream (queued). A job is always in one
// of them: it enters the work stream before it leaves the schedules
// stream, and its record is written before its message is acked; so a
// job that moved on between the reads is found when read again.
func (q *Queue) lookup(ctx context.Context, id ID) (r record, queued *jetstream.RawStreamMsg, err error) {
	for range 2 {
		r, _, err = q.record(ctx, id)
		if !errors.Is(err, ErrNotFound) {
			return r, nil, err
		}
		queued, err = q.waiting(ctx, id)
		if !errors.Is(err, ErrNotFound) {
			return r, queued, err
		}
	}
	return r, nil, ErrNotFound
}

// validID reports whether id could be one Enqueue returned: a subject
// token and a bucket key.
func validID(id ID) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for _, c := range []byte(id) {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}
