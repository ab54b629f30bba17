package natsjobs

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// What a queue is on JetStream (see the package doc's Design): the names
// of its streams, buckets, consumer and subjects, and the settings Open
// gives them. The permission helpers (perms.go) are computed from the
// same names.

var validName = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// checkQueueName says what is wrong with queue as a queue's name. Its
// streams' names are the work stream's with a suffix: a queue named so
// would have another queue's stream for its work stream (and its admin
// the rights to that stream).
func checkQueueName(queue string) error {
	if !validName.MatchString(queue) {
		return fmt.Errorf("natsjobs: queue name %q: want letters, digits, '-' and '_'", queue)
	}
	for _, suffix := range []string{"_DEAD", "_SCHEDULED"} {
		if strings.HasSuffix(queue, suffix) {
			return fmt.Errorf("natsjobs: queue name %q: it ends in %s, as the streams of queue %q do", queue, suffix, strings.TrimSuffix(queue, suffix))
		}
	}
	return nil
}

// workStreamName is the stream of queue's jobs waiting, retrying or
// running; the other names start with it.
func workStreamName(queue string) string { return "OFFLOAD_JOBS_" + queue }

func deadStreamName(queue string) string      { return workStreamName(queue) + "_DEAD" }
func schedulesStreamName(queue string) string { return workStreamName(queue) + "_SCHEDULED" }
func statusBucketName(queue string) string    { return workStreamName(queue) + "_STATUS" }
func keyBucketName(queue string) string       { return workStreamName(queue) + "_KEYS" }

// kvStreamName is the stream that holds a bucket, as nats.go names it.
func kvStreamName(bucket string) string { return "KV_" + bucket }

// workersConsumer is the work stream's durable consumer, shared by every
// Serve.
const workersConsumer = "workers"

// subjectsOf is the prefix of every subject of queue: jobs are on
// PREFIX.job.<id>, dead jobs on PREFIX.dead.<id>, cancels on
// PREFIX.cancel, delayed jobs on PREFIX.scheduled.<id> until due and
// PREFIX.due.<id> then (delay.go).
func subjectsOf(queue string) string { return "offload.jobs." + queue + "." }

// workStreamConfig: jobs waiting or retrying, removed once acked,
// bounded by MaxJobs and MaxBytes (DiscardNew: a full queue refuses at
// once).
func workStreamConfig(o Options) jetstream.StreamConfig {
	return jetstream.StreamConfig{
		Name:       workStreamName(o.Name),
		Subjects:   []string{subjectsOf(o.Name) + "job.*"},
		Retention:  jetstream.WorkQueuePolicy,
		MaxMsgs:    int64(o.MaxJobs),
		MaxBytes:   o.MaxBytes,
		Discard:    jetstream.DiscardNew,
		Storage:    jetstream.FileStorage,
		Replicas:   o.Replicas,
		Duplicates: 2 * time.Minute,
		Sources:    dueSources(o.Name),
	}
}

// deadStreamConfig: dead jobs, moved aside with their input for Retry,
// one copy each.
func deadStreamConfig(o Options) jetstream.StreamConfig {
	return jetstream.StreamConfig{
		Name:              deadStreamName(o.Name),
		Subjects:          []string{subjectsOf(o.Name) + "dead.*"},
		MaxMsgsPerSubject: 1,
		MaxAge:            o.Retention,
		Storage:           jetstream.FileStorage,
		Replicas:          o.Replicas,
	}
}

// workersConsumerConfig: AckWait is the lease. Attempts are counted in
// the status record, not by redeliveries (which a worker lacking the
// task, or a full pool, also makes): the consumer redelivers forever.
func workersConsumerConfig(o Options) jetstream.ConsumerConfig {
	return jetstream.ConsumerConfig{
		Durable:       workersConsumer,
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       o.Lease,
		MaxDeliver:    -1,
		MaxAckPending: -1,
	}
}

func statusBucketConfig(o Options) jetstream.KeyValueConfig {
	return jetstream.KeyValueConfig{
		Bucket: statusBucketName(o.Name), TTL: o.Retention, History: 1, Storage: jetstream.FileStorage, Replicas: o.Replicas,
	}
}

func keyBucketConfig(o Options) jetstream.KeyValueConfig {
	return jetstream.KeyValueConfig{
		Bucket: keyBucketName(o.Name), TTL: o.Retention, History: 1, Storage: jetstream.FileStorage, Replicas: o.Replicas,
	}
}
