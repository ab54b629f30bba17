package natsjobs_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/internal/testkit"
	"github.com/offloadgo/offload/natsjobs"
	"github.com/offloadgo/offload/natsremote"
	"github.com/offloadgo/offload/natsremote/embedded"
	"github.com/offloadgo/offload/pool"
)

// rolesServer is a JetStream server with authorization on, and a user
// for each role of queue, named for it (admin, enqueuer, worker),
// "nobody", who may only hear answers on its inbox, and "no-fetch", a
// worker that may not ask for jobs.
func rolesServer(t *testing.T, queue string) *embedded.Server {
	t.Helper()
	s, err := embedded.Start(embedded.Options{StoreDir: t.TempDir(), Users: []embedded.User{
		asUser("admin", natsjobs.AdminPermissions(queue, "")),
		asUser("enqueuer", natsjobs.EnqueuerPermissions(queue, "")),
		asUser("worker", natsjobs.WorkerPermissions(queue, "")),
		asUser("nobody", natsremote.Permissions{Subscribe: []string{"_INBOX.>"}}),
		asUser("no-fetch", without(natsjobs.WorkerPermissions(queue, ""), "$JS.API.CONSUMER.MSG.NEXT.OFFLOAD_JOBS_"+queue+".workers")),
	}})
	require.NoError(t, err)
	t.Cleanup(s.Shutdown)
	return s
}

// without is p without the right to publish on subject.
func without(p natsremote.Permissions, subject string) natsremote.Permissions {
	p.Publish = slices.DeleteFunc(slices.Clone(p.Publish), func(s string) bool { return s == subject })
	return p
}

func asUser(name string, p natsremote.Permissions) embedded.User {
	return embedded.User{Name: name, Password: name + "-pw", Publish: p.Publish, Subscribe: p.Subscribe}
}

// connectAs connects as user, quietly: refusals are what some tests
// look for, and the default error handler would print them.
func connectAs(t *testing.T, s *embedded.Server, user string) *nats.Conn {
	t.Helper()
	quiet := nats.ErrorHandler(func(*nats.Conn, *nats.Subscription, error) {})
	nc, err := s.Connect(quiet, nats.UserInfo(user, user+"-pw"))
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	return nc
}

// openAs opens the queue o names as user.
func openAs(t *testing.T, s *embedded.Server, user string, o natsjobs.Options) (*natsjobs.Queue, *nats.Conn) {
	t.Helper()
	nc := connectAs(t, s, user)
	return open(t, nc, o), nc
}

// refused asserts that the server refuses nc's publish on subject:
// it says so in a permissions violation naming it, which a round trip
// after the publish brings.
func refused(t *testing.T, nc *nats.Conn, subject string) {
	t.Helper()
	before := nc.LastError()
	require.NoError(t, nc.Publish(subject, []byte("{}")))
	require.NoError(t, nc.Flush())
	err := nc.LastError()
	if assert.ErrorIs(t, err, nats.ErrPermissionViolation, "publish on %q", subject) {
		assert.True(t, err != before, "a new refusal, of %q", subject)
		assert.Contains(t, err.Error(), `"`+subject+`"`)
	}
}

// With authorization on, each role does its job on its permissions
// alone: the admin makes the queue and cancels jobs, an enqueuer
// enqueues (with a Key, or a Delay, too), reads Status and Waits, a
// worker Serves jobs to Succeeded, and both read Stats. Neither the
// enqueuer's nor the worker's Open asks for anything it may not (its
// connection hears no refusal).
func TestEachRoleDoesItsJob(t *testing.T) {
	t.Parallel()
	s := rolesServer(t, "roles")
	o := natsjobs.Options{Name: "roles"}
	admin, _ := openAs(t, s, "admin", o)
	enqueuer, enc := openAs(t, s, "enqueuer", o)
	worker, wnc := openAs(t, s, "worker", o)
	assert.NoError(t, enc.LastError(), "the enqueuer's Open asked for nothing refused")
	assert.NoError(t, wnc.LastError(), "nor did the worker's")
	ctx := testkit.Ctx(t)

	// Before any worker serves: the admin cancels a queued job and a
	// delayed one.
	for _, opts := range [][]natsjobs.EnqueueOption{nil, {natsjobs.Delay(time.Hour)}} {
		canceled, err := natsjobs.Enqueue(ctx, enqueuer, double, Num{1}, opts...)
		require.NoError(t, err)
		st, err := enqueuer.Status(ctx, canceled)
		require.NoError(t, err)
		assert.Contains(t, []natsjobs.State{natsjobs.Queued, natsjobs.Scheduled}, st.State)
		require.NoError(t, admin.Cancel(ctx, canceled))
		_, err = natsjobs.Wait(ctx, enqueuer, double, canceled)
		require.ErrorIs(t, err, natsjobs.ErrCanceled)
	}

	serve(t, worker, newPool(t, pool.Options{Workers: 2}), natsjobs.ServeOptions{})
	id, err := natsjobs.Enqueue(ctx, enqueuer, double, Num{21}, natsjobs.Key("order-42"))
	require.NoError(t, err)
	again, err := natsjobs.Enqueue(ctx, enqueuer, double, Num{21}, natsjobs.Key("order-42"))
	require.NoError(t, err)
	assert.Equal(t, id, again, "the Key found the first job")
	out, err := natsjobs.Wait(ctx, enqueuer, double, id)
	require.NoError(t, err)
	assert.Equal(t, 42, out)
	delayed, err := natsjobs.Enqueue(ctx, enqueuer, double, Num{4}, natsjobs.Delay(100*time.Millisecond))
	require.NoError(t, err)
	out, err = natsjobs.Wait(ctx, enqueuer, double, delayed)
	require.NoError(t, err)
	assert.Equal(t, 8, out, "a delayed job falls due and runs")
	st, err := enqueuer.Status(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, natsjobs.Succeeded, st.State)
	assert.Equal(t, 1, st.Attempt)
	for _, q := range []*natsjobs.Queue{enqueuer, worker} {
		_, err := q.Stats(ctx) // what a metrics scrape asks
		require.NoError(t, err)
	}
	dead, err := admin.List(ctx, natsjobs.Dead, 10)
	require.NoError(t, err)
	assert.Empty(t, dead)
	assert.NoError(t, enc.LastError(), "the enqueuer was refused nothing")
	assert.NoError(t, wnc.LastError(), "nor was the worker")
}

// Each role is refused, by the server, what it must not do: an enqueuer
// can't take jobs, ack them, write a status, tell workers to cancel,
// nor touch the streams; a worker can't enqueue, write a Key, cancel,
// nor make, change, purge or delete a stream or the consumer; an admin
// can't touch another queue's streams.
func TestEachRoleIsRefusedWhatItMustNotDo(t *testing.T) {
	t.Parallel()
	s := rolesServer(t, "q")
	open(t, connectAs(t, s, "admin"), natsjobs.Options{Name: "q"})
	for user, subjects := range map[string][]string{
		"enqueuer": {
			"$JS.API.CONSUMER.MSG.NEXT.OFFLOAD_JOBS_q.workers",
			"$JS.ACK.OFFLOAD_JOBS_q.workers.1.1.1.1.0",
			"$KV.OFFLOAD_JOBS_q_STATUS.someone",
			"offload.jobs.q.cancel",
			"offload.jobs.q.dead.someone",
			"offload.jobs.q.due.someone",
			"$JS.API.STREAM.MSG.DELETE.OFFLOAD_JOBS_q",
			"$JS.API.STREAM.PURGE.OFFLOAD_JOBS_q_SCHEDULED",
			"$JS.API.STREAM.PURGE.OFFLOAD_JOBS_q",
			"$JS.API.STREAM.DELETE.OFFLOAD_JOBS_q_DEAD",
			"$JS.API.STREAM.CREATE.OFFLOAD_JOBS_other",
			"$JS.API.CONSUMER.CREATE.OFFLOAD_JOBS_q.mine",
		},
		"worker": {
			"offload.jobs.q.job.forged",
			"offload.jobs.q.scheduled.forged",
			"$KV.OFFLOAD_JOBS_q_KEYS.kb3JkZXI",
			"offload.jobs.q.cancel",
			"$JS.API.STREAM.DELETE.OFFLOAD_JOBS_q",
			"$JS.API.STREAM.PURGE.OFFLOAD_JOBS_q",
			"$JS.API.STREAM.UPDATE.OFFLOAD_JOBS_q",
			"$JS.API.STREAM.CREATE.OFFLOAD_JOBS_other",
			"$JS.API.STREAM.MSG.DELETE.OFFLOAD_JOBS_q",
			"$JS.API.STREAM.MSG.GET.OFFLOAD_JOBS_q",
			"$JS.API.CONSUMER.DELETE.OFFLOAD_JOBS_q.workers",
			"$JS.API.CONSUMER.CREATE.OFFLOAD_JOBS_q.workers",
		},
		"admin": {
			"$JS.API.STREAM.DELETE.OFFLOAD_JOBS_other",
			"$JS.API.STREAM.CREATE.ANOTHER_APP",
			"offload.jobs.other.job.forged",
			"$KV.OFFLOAD_JOBS_other_STATUS.someone",
		},
	} {
		t.Run(user, func(t *testing.T) {
			nc := connectAs(t, s, user)
			for _, subject := range subjects {
				refused(t, nc, subject)
			}
		})
	}
	// And what it may do, it may: the admin made all of it.
	js, err := jetstream.New(connectAs(t, s, "admin"))
	require.NoError(t, err)
	for _, name := range []string{"OFFLOAD_JOBS_q", "OFFLOAD_JOBS_q_DEAD", "OFFLOAD_JOBS_q_SCHEDULED", "KV_OFFLOAD_JOBS_q_STATUS", "KV_OFFLOAD_JOBS_q_KEYS"} {
		_, err := js.Stream(testkit.Ctx(t), name)
		assert.NoError(t, err, name)
	}
}

// A worker's credentials can't forge the outcome of an attempt they
// don't hold: a worker that claimed attempt 1 and lost its lease writes
// its outcome over its claim's revision, which the attempt that
// replaced it has moved on from, and the server refuses the write. What
// they can do is what WorkerPermissions says: write without the
// condition.
func TestWorkerCredentialsCannotForgeAnotherAttemptsOutcome(t *testing.T) {
	t.Parallel()
	s := rolesServer(t, "forge")
	o := natsjobs.Options{Name: "forge", Lease: 300 * time.Millisecond}
	open(t, connectAs(t, s, "admin"), o)
	enqueuer, _ := openAs(t, s, "enqueuer", o)
	ctx := testkit.Ctx(t)
	id, err := natsjobs.Enqueue(ctx, enqueuer, double, Num{21})
	require.NoError(t, err)

	// The stale worker: it takes the job, claims attempt 1, then stops
	// renewing its lease.
	stale, err := jetstream.New(connectAs(t, s, "worker"))
	require.NoError(t, err)
	workers, err := stale.Consumer(ctx, "OFFLOAD_JOBS_forge", "workers")
	require.NoError(t, err)
	batch, err := workers.Fetch(1, jetstream.FetchMaxWait(10*time.Second))
	require.NoError(t, err)
	m := <-batch.Messages()
	require.NotNil(t, m, "the stale worker got the job")
	statuses, err := stale.KeyValue(ctx, "OFFLOAD_JOBS_forge_STATUS")
	require.NoError(t, err)
	claim, err := statuses.Create(ctx, string(id), natsjobs.RecordForTest(double.Name(), natsjobs.Running, 1, nil))
	require.NoError(t, err)

	// A live worker gets the job once the lease passes, and runs it.
	worker, _ := openAs(t, s, "worker", o)
	serve(t, worker, newPool(t, pool.Options{Workers: 1}), natsjobs.ServeOptions{})
	out, err := natsjobs.Wait(ctx, enqueuer, double, id)
	require.NoError(t, err)
	assert.Equal(t, 42, out)

	// The stale worker's outcome, over its claim: refused.
	_, err = statuses.Update(ctx, string(id), natsjobs.RecordForTest(double.Name(), natsjobs.Succeeded, 1, 666), claim)
	require.Error(t, err)
	assert.True(t, errors.Is(err, jetstream.ErrKeyExists) || errors.Is(err, jetstream.ErrKeyRevisionMismatch), "%v", err)
	st, err := enqueuer.Status(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, natsjobs.Succeeded, st.State)
	assert.Equal(t, 2, st.Attempt, "the live worker's attempt stands")
	out, err = natsjobs.Wait(ctx, enqueuer, double, id)
	require.NoError(t, err)
	assert.Equal(t, 42, out)

	// The limit WorkerPermissions states: the same credentials may write
	// a record without the condition, and the server takes it.
	_, err = statuses.Put(ctx, string(id), natsjobs.RecordForTest(double.Name(), natsjobs.Succeeded, 1, 666))
	require.NoError(t, err, "permissions are by subject, not by job or condition")
	out, err = natsjobs.Wait(ctx, enqueuer, double, id)
	require.NoError(t, err)
	assert.Equal(t, 666, out, "as WorkerPermissions' doc says, such a user can forge an outcome")
}

// An admin may do all that an enqueuer and a worker may: each subject of
// theirs is within one of its.
func TestAdminMayDoAllTheOtherRolesMay(t *testing.T) {
	t.Parallel()
	admin := natsjobs.AdminPermissions("q", "MY_INBOX")
	for role, p := range map[string]natsremote.Permissions{
		"enqueuer": natsjobs.EnqueuerPermissions("q", "MY_INBOX"),
		"worker":   natsjobs.WorkerPermissions("q", "MY_INBOX"),
	} {
		for _, s := range p.Publish {
			assert.True(t, slices.ContainsFunc(admin.Publish, func(a string) bool { return within(s, a) }), "%s may publish on %q; the admin too", role, s)
		}
		for _, s := range p.Subscribe {
			assert.True(t, slices.ContainsFunc(admin.Subscribe, func(a string) bool { return within(s, a) }), "%s may subscribe to %q; the admin too", role, s)
		}
	}
	assert.Contains(t, admin.Subscribe, "MY_INBOX.>")
}

// within reports whether every subject that pattern s matches, pattern
// a matches too.
func within(s, a string) bool {
	st, at := strings.Split(s, "."), strings.Split(a, ".")
	for i, tok := range at {
		switch {
		case tok == ">":
			return i < len(st)
		case i >= len(st), st[i] == ">":
			return false
		case tok != "*" && tok != st[i]:
			return false
		}
	}
	return len(st) == len(at)
}
