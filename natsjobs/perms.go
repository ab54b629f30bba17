package natsjobs

import (
	"slices"

	"github.com/offloadgo/offload/natsremote"
)

// The permissions of a queue's three roles, for a NATS system with
// authorization (see the package doc's Trust and permissions). Each is
// the least a user needs for what its role does through this package,
// computed from the JetStream API subjects nats.go's jetstream package
// asks on (at the default API prefix, $JS.API) and the queue's own
// subjects; inboxPrefix is that of the user's connections ("" means
// natsremote.DefaultInboxPrefix), where the server answers. Give each
// service its own inbox prefix (nats.CustomInboxPrefix) and user, so
// that no other user may read its answers. For a name Open refuses (see
// Options.Name) they are empty: they allow nothing.

// EnqueuerPermissions is the least a NATS user needs to Open the queue
// named queue once a user of AdminPermissions has made it, Enqueue jobs
// (Key, Delay and At included), and read them: Status, Wait, and so
// Accept and StatusHandler. It may not take, cancel or retry jobs, nor
// write their status.
func EnqueuerPermissions(queue, inboxPrefix string) natsremote.Permissions {
	if checkQueueName(queue) != nil {
		return natsremote.Permissions{}
	}
	work, status, keys := workStreamName(queue), kvStreamName(statusBucketName(queue)), kvStreamName(keyBucketName(queue))
	return natsremote.Permissions{
		Publish: slices.Concat(lookups(queue),
			[]string{
				subjectsOf(queue) + "job.*",       // Enqueue
				subjectsOf(queue) + "scheduled.*", // Enqueue with Delay or At
				"$KV." + keyBucketName(queue) + ".>",
			},
			gets(keys), gets(status), gets(work), gets(schedulesStreamName(queue)), // Key, Status
			watches(status), // Wait's watch on the status bucket
		),
		Subscribe: []string{inbox(inboxPrefix) + ".>"},
	}
}

// WorkerPermissions is the least a NATS user needs to Open the queue
// named queue once a user of AdminPermissions has made it, and Serve it:
// take jobs from its consumer, renew their leases and ack them, write
// their status records, move dead jobs aside, and hear Cancels. It may
// not enqueue, cancel or retry jobs, nor read the work stream but
// through its consumer.
//
// The server grants rights by subject, not by job: a worker's user may
// write the status record of any job of the queue, and ack any message
// the consumer delivers. A worker of this package writes an attempt's
// outcome only over the revision its claim wrote, so a worker that lost
// its lease can't overwrite the attempt that replaced it; but a user
// holding these permissions can write a record without that condition,
// and so mark any job Succeeded with an output of its choosing, or Dead;
// and a copy of its making in the dead stream is what Retry enqueues.
// Workers are trusted with the queue's jobs, as a pool's nodes are with
// their calls (see the package doc).
func WorkerPermissions(queue, inboxPrefix string) natsremote.Permissions {
	if checkQueueName(queue) != nil {
		return natsremote.Permissions{}
	}
	work, status := workStreamName(queue), kvStreamName(statusBucketName(queue))
	return natsremote.Permissions{
		Publish: slices.Concat(lookups(queue),
			[]string{
				apiConsumer("MSG.NEXT", work, workersConsumer), // Fetch
				"$KV." + statusBucketName(queue) + ".>",        // claims, outcomes
				subjectsOf(queue) + "dead.*",                   // dead jobs moved aside
			},
			acks(work, workersConsumer), // ack, nak, renew the lease, term
			gets(status),
		),
		Subscribe: []string{inbox(inboxPrefix) + ".>", subjectsOf(queue) + "cancel"},
	}
}

// AdminPermissions is the least a NATS user needs to make and manage the
// queue named queue: Open creates its streams, buckets and consumer, and
// updates them to its Options; Cancel, Retry and List, an operator's
// acts, are its alone. It may also do all that EnqueuerPermissions and
// WorkerPermissions allow, so one user can run a queue whole (as it does
// on a server without authorization), and read, change or delete any of
// the queue's streams and consumers. It may not touch other streams.
func AdminPermissions(queue, inboxPrefix string) natsremote.Permissions {
	if checkQueueName(queue) != nil {
		return natsremote.Permissions{}
	}
	work := workStreamName(queue)
	publish := []string{
		apiAccountInfo,          // asked before a bucket is made
		subjectsOf(queue) + ">", // jobs, dead jobs, Cancel's word to the Serves
		"$KV." + statusBucketName(queue) + ".>",
		"$KV." + keyBucketName(queue) + ".>",
		apiPrefix + "CONSUMER.MSG.NEXT." + work + ".>",
	}
	for _, s := range streamsOf(queue) {
		publish = append(publish,
			apiPrefix+"STREAM.*."+s,        // CREATE, UPDATE, INFO, DELETE, PURGE
			apiPrefix+"STREAM.MSG.*."+s,    // GET, DELETE
			apiPrefix+"DIRECT.GET."+s,      // by sequence
			apiPrefix+"DIRECT.GET."+s+".>", // last by subject
			apiPrefix+"CONSUMER.*."+s,      // NAMES, LIST
			apiPrefix+"CONSUMER.*."+s+".>", // CREATE, INFO, DELETE, ...
		)
	}
	publish = slices.Concat(publish, acks(work, "*"),
		flowControl(kvStreamName(statusBucketName(queue))), flowControl(kvStreamName(keyBucketName(queue))))
	return natsremote.Permissions{Publish: publish, Subscribe: WorkerPermissions(queue, inboxPrefix).Subscribe}
}

// streamsOf lists the streams of queue, its buckets' included.
func streamsOf(queue string) []string {
	return []string{workStreamName(queue), deadStreamName(queue), schedulesStreamName(queue),
		kvStreamName(statusBucketName(queue)), kvStreamName(keyBucketName(queue))}
}

// lookups are the requests of Open binding to what is there.
func lookups(queue string) []string {
	var l []string
	for _, s := range streamsOf(queue) {
		l = append(l, apiStream("INFO", s))
	}
	return append(l, apiConsumer("INFO", workStreamName(queue), workersConsumer))
}

// gets are the requests that read a message of stream: the server
// answers by the direct API or the stream's leader, as the stream's
// AllowDirect says (a bucket's, by the direct API, last by subject).
func gets(stream string) []string {
	return []string{apiStream("MSG.GET", stream), apiPrefix + "DIRECT.GET." + stream, apiPrefix + "DIRECT.GET." + stream + ".>"}
}

// acks are the subjects of the acks (and naks, lease renewals, terms) of
// the messages consumer delivers from stream, in both the forms a server
// may give them: $JS.ACK.<stream>.<consumer>.…, and, with the server's
// v2 ack format, $JS.ACK.<domain>.<account hash>.<stream>.<consumer>.….
func acks(stream, consumer string) []string {
	return []string{"$JS.ACK." + stream + "." + consumer + ".>", "$JS.ACK.*.*." + stream + "." + consumer + ".>"}
}

// flowControl are the subjects on which a watch answers the server's
// flow control, in both forms (see acks).
func flowControl(stream string) []string {
	return []string{"$JS.FC." + stream + ".>", "$JS.FC.*.*." + stream + ".>"}
}

// watches are the requests of a watch on the bucket held by stream: an
// ordered consumer of its own, made and deleted by the watcher, that
// asks for flow control.
func watches(stream string) []string {
	return slices.Concat([]string{
		apiPrefix + "CONSUMER.CREATE." + stream + ".>",
		apiPrefix + "CONSUMER.DELETE." + stream + ".>",
	}, flowControl(stream))
}

func inbox(prefix string) string {
	if prefix == "" {
		return natsremote.DefaultInboxPrefix
	}
	return prefix
}
