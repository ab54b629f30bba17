package natsjobs_test

import (
	"context"
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
	"github.com/offloadgo/offload/pool"
)

// An enqueuer's or a worker's Open of a queue no admin has made fails at
// once, not when its ctx ends: its error names what is missing and the
// permissions that make it, and matches nats.ErrPermissionViolation; it
// makes nothing. A user that may not even look the queue up is told
// which permissions let it.
func TestOpenWithoutTheRightToCreateSaysWhatIsMissing(t *testing.T) {
	t.Parallel()
	s := rolesServer(t, "unmade")
	for user, says := range map[string][]string{
		"enqueuer": {"schedules stream OFFLOAD_JOBS_unmade_SCHEDULED is missing", `AdminPermissions("unmade", "")`, `"$JS.API.STREAM.CREATE.OFFLOAD_JOBS_unmade_SCHEDULED"`},
		"worker":   {"schedules stream OFFLOAD_JOBS_unmade_SCHEDULED is missing", `AdminPermissions("unmade", "")`},
		"nobody":   {"look up its schedules stream OFFLOAD_JOBS_unmade_SCHEDULED", `EnqueuerPermissions, WorkerPermissions or AdminPermissions("unmade", "")`, `"$JS.API.STREAM.INFO.OFFLOAD_JOBS_unmade_SCHEDULED"`},
	} {
		t.Run(user, func(t *testing.T) {
			t.Parallel()
			nc := connectAs(t, s, user)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			var err error
			testkit.Within(t, 20*time.Second, "Open refused", func() {
				_, err = natsjobs.Open(ctx, nc, natsjobs.Options{Name: "unmade"})
			})
			require.ErrorIs(t, err, nats.ErrPermissionViolation)
			require.NoError(t, ctx.Err(), "it did not wait for ctx")
			for _, said := range says {
				assert.Contains(t, err.Error(), said)
			}
			assert.Equal(t, 1, strings.Count(err.Error(), "natsjobs: "), "one prefix: %v", err)
			t.Log(err)
		})
	}
	t.Cleanup(func() {
		// The test's own context has ended by now; the look-up needs one.
		ctx, cancel := context.WithTimeout(context.Background(), testkit.CtxBound)
		defer cancel()
		js, err := jetstream.New(connectAs(t, s, "admin"))
		require.NoError(t, err)
		for _, name := range []string{"OFFLOAD_JOBS_unmade_SCHEDULED", "OFFLOAD_JOBS_unmade"} {
			_, err = js.Stream(ctx, name)
			assert.ErrorIs(t, err, jetstream.ErrStreamNotFound, "nobody made the queue")
		}
	})
}

// Where an enqueuer or a worker opens a queue with Options that differ
// from those the admin made it with, the queue stays as made and the
// Queue follows it: the work stream's MaxJobs holds, and the worker
// renews its leases by the consumer's AckWait, not by its own Lease.
func TestOpenWithoutTheRightToUpdateFollowsTheQueueAsMade(t *testing.T) {
	t.Parallel()
	s := rolesServer(t, "made")
	made := natsjobs.Options{Name: "made", MaxJobs: 3, Lease: 600 * time.Millisecond, Retention: time.Hour}
	open(t, connectAs(t, s, "admin"), made)
	mine := natsjobs.Options{Name: "made", MaxJobs: 1000, Lease: time.Minute}
	enqueuer, _ := openAs(t, s, "enqueuer", mine)
	worker, _ := openAs(t, s, "worker", mine)
	for _, q := range []*natsjobs.Queue{enqueuer, worker} {
		got := natsjobs.OptionsOf(q)
		assert.Equal(t, made.MaxJobs, got.MaxJobs)
		assert.Equal(t, made.Lease, got.Lease)
		assert.Equal(t, made.Retention, got.Retention)
	}
	ctx := testkit.Ctx(t)
	var ids []natsjobs.ID
	for i := range 3 {
		id, err := natsjobs.Enqueue(ctx, enqueuer, double, Num{i})
		require.NoError(t, err)
		ids = append(ids, id)
	}
	_, err := natsjobs.Enqueue(ctx, enqueuer, double, Num{3})
	require.ErrorIs(t, err, pool.ErrQueueFull, "the admin's MaxJobs holds")
	// Two slots: one free to take the job again, were its lease lost.
	serve(t, worker, newPool(t, pool.Options{Workers: 2}), natsjobs.ServeOptions{})
	for _, id := range ids {
		_, err := natsjobs.Wait(ctx, enqueuer, double, id)
		require.NoError(t, err)
	}

	// A job that outlives the 600 ms lease runs once: the worker renews
	// it every 200 ms, as the consumer's AckWait asks.
	k := key(t)
	id, err := natsjobs.Enqueue(ctx, enqueuer, sleepy, Keyed{Key: k, Sleep: 1500 * time.Millisecond}, natsjobs.MaxAttempts(1))
	require.NoError(t, err)
	out, err := natsjobs.Wait(ctx, enqueuer, sleepy, id)
	require.NoError(t, err)
	assert.Equal(t, "slept", out)
	assert.Equal(t, 1, runCount(k))
}

// Open by a user that may update the queue (the admin, or anyone on a
// server without authorization) makes it say what its Options say; one
// whose Options say what the queue says asks for no change.
func TestOpenUpdatesWhereItMay(t *testing.T) {
	t.Parallel()
	s := rolesServer(t, "grown")
	admin := connectAs(t, s, "admin")
	open(t, admin, natsjobs.Options{Name: "grown", MaxJobs: 3})
	q := open(t, admin, natsjobs.Options{Name: "grown", MaxJobs: 5})
	assert.Equal(t, 5, natsjobs.OptionsOf(q).MaxJobs)
	js, err := jetstream.New(admin)
	require.NoError(t, err)
	st, err := js.Stream(testkit.Ctx(t), "OFFLOAD_JOBS_grown")
	require.NoError(t, err)
	assert.EqualValues(t, 5, st.CachedInfo().Config.MaxMsgs)

	_, wnc := openAs(t, s, "worker", natsjobs.Options{Name: "grown", MaxJobs: 5})
	assert.NoError(t, wnc.LastError(), "the worker's Open asked for no update")
}

// A queue named as another queue's streams end (reports_DEAD names the
// dead stream of reports) is refused by Open, and its permissions allow
// nothing: its admin would get the rights to the other queue's stream.
// So are names that would put wildcards or dots in the subjects.
func TestQueueNamesThatNameAnotherQueuesStreamsAreRefused(t *testing.T) {
	t.Parallel()
	_, nc := startJetStream(t)
	for _, name := range []string{"reports_DEAD", "reports_SCHEDULED", "*", ">", "a.b"} {
		_, err := natsjobs.Open(testkit.Ctx(t), nc, natsjobs.Options{Name: name})
		assert.ErrorContains(t, err, "natsjobs: queue name", name)
		for _, p := range []func(string, string) natsremote.Permissions{natsjobs.AdminPermissions, natsjobs.EnqueuerPermissions, natsjobs.WorkerPermissions} {
			assert.Zero(t, p(name, ""), name)
		}
	}
	_, err := natsjobs.Open(testkit.Ctx(t), nc, natsjobs.Options{Name: "reports_DEAD"})
	assert.ErrorContains(t, err, `as the streams of queue "reports" do`)
	assert.NotZero(t, natsjobs.AdminPermissions("reports_DEADLINE", ""), "a name may hold the words")
}
