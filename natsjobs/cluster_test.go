package natsjobs_test

import (
	"context"
	"fmt"
	"runtime/pprof"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/natsjobs"
	"github.com/offloadgo/offload/natsremote/embedded"
	"github.com/offloadgo/offload/pool"
)

// The streams of queue "cluster": the work and dead streams, and the
// status and key buckets' streams.
var clusterStreams = []string{"OFFLOAD_JOBS_cluster", "OFFLOAD_JOBS_cluster_DEAD",
	"KV_OFFLOAD_JOBS_cluster_STATUS", "KV_OFFLOAD_JOBS_cluster_KEYS"}

// A queue of three replicas on a cluster of three servers loses no job
// when the server leading its streams is killed under load, and runs
// none twice beyond what at-least-once allows; the server, restarted,
// catches up.
func TestClusterLosesNoJobWhenAServerDies(t *testing.T) {
	t.Parallel()
	const jobs = 200
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()
	c, err := embedded.StartCluster(3, embedded.Options{StoreDir: t.TempDir()})
	require.NoError(t, err)
	t.Cleanup(c.Shutdown)
	o := natsjobs.Options{Name: "cluster", Replicas: 3, Lease: 2 * time.Second}

	admin := dialCluster(t, c.URLs())
	q, err := natsjobs.Open(ctx, admin, o)
	require.NoError(t, err)
	defer q.Close()
	js, err := jetstream.New(admin)
	require.NoError(t, err)
	requireThreeReplicas(ctx, t, js)
	// The victim leads where every claim and outcome is written, and is
	// made to lead the work stream and its consumer too: Enqueue, Serve's
	// fetches and acks, and the status records all fail over at once.
	victim := leaderOf(ctx, t, js, "KV_OFFLOAD_JOBS_cluster_STATUS")
	survivor := (victim + 1) % 3
	makeLead(ctx, t, admin, js, victim)
	t.Logf("killing server %d, which leads %s", victim, led(ctx, t, js, victim))

	// The enqueuer knows every server and is connected to the victim
	// first: it reconnects. The worker is on a survivor.
	urls := strings.Split(c.URLs(), ",")
	enqueuer := dialCluster(t, strings.Join(append([]string{urls[victim]}, urls...), ","))
	eq, err := natsjobs.Open(ctx, enqueuer, o)
	require.NoError(t, err)
	defer eq.Close()
	wq, err := natsjobs.Open(ctx, dialCluster(t, urls[survivor]), o)
	require.NoError(t, err)
	t.Cleanup(func() { _ = wq.Close() }) // after Serve's cleanup
	serve(t, wq, newPool(t, pool.Options{Workers: 2}), natsjobs.ServeOptions{})

	k := key(t)
	jobKey := func(i int) string { return fmt.Sprintf("%s/%d", k, i) }
	ids := make([]natsjobs.ID, jobs)
	enqueue := func(from, to int) {
		for i := from; i < to; i++ {
			var err error
			ids[i], err = natsjobs.Enqueue(ctx, eq, sleepy, Keyed{Key: jobKey(i), Sleep: 5 * time.Millisecond})
			require.NoError(t, err, "job %d: Enqueue rides out the failover", i)
		}
	}
	ranSoFar := func() (n int) {
		for i := range jobs {
			n += min(runCount(jobKey(i)), 1)
		}
		return n
	}
	enqueue(0, jobs/2)
	require.Eventually(t, func() bool { return ranSoFar() >= jobs/5 }, 30*time.Second, time.Millisecond, "served under load")
	c.Servers[victim].Shutdown()
	killedAt := time.Now()
	enqueue(jobs/2, jobs) // while the streams elect new leaders
	t.Logf("enqueued the second half in %v after the kill", time.Since(killedAt))

	// A reader on the other survivor opens the queue, with the victim
	// still down.
	late, err := natsjobs.Open(ctx, dialCluster(t, urls[3-victim-survivor]), o)
	require.NoError(t, err, "Open rides out the failover")
	defer late.Close()
	doubles := 0
	for i, id := range ids {
		out, err := natsjobs.Wait(ctx, eq, sleepy, id)
		if err != nil {
			// For the next reader of a failure: where the job stands, and
			// what every goroutine (Serve's puller among them) was doing.
			st, serr := late.Status(context.Background(), id)
			var stacks strings.Builder
			_ = pprof.Lookup("goroutine").WriteTo(&stacks, 1)
			t.Log(stacks.String())
			require.NoError(t, err, "job %d: %+v (%v), ran %d times", i, st, serr, runCount(jobKey(i)))
		}
		assert.Equal(t, "slept", out)
		// A leader elected a moment ago may not have applied every
		// change yet: Status, read on another connection, catches up.
		var st natsjobs.Status
		require.Eventually(t, func() bool {
			st, err = late.Status(ctx, id)
			return err == nil && st.State == natsjobs.Succeeded
		}, 10*time.Second, 10*time.Millisecond, "job %d, read on another server", i)
		n := runCount(jobKey(i))
		require.GreaterOrEqual(t, n, 1, "job %d ran", i)
		// A run is an attempt counted in the job's record before the
		// task starts: a job runs again only as a later attempt.
		assert.LessOrEqual(t, n, st.Attempt, "job %d ran %d times in %d attempts", i, n, st.Attempt)
		if n > 1 {
			doubles++
		}
	}
	t.Logf("%d jobs, %d run twice, all succeeded %v after the kill", jobs, doubles, time.Since(killedAt))
	// At least once allows a double run only where the failover
	// interrupted a run's outcome write. The write goes over the
	// revision the run's claim wrote, tried again through the election
	// for up to 10 s; one that still did not get through (the bucket
	// leaderless longer), or that lost to a new claim (the job's lease
	// passed while no heartbeat reached the consumer's new leader), leaves
	// the job to its next delivery, which runs it again as its next
	// attempt. Only the jobs running at the kill can be such, one per
	// worker: while writes fail no claim is written, so no run starts.
	assert.LessOrEqual(t, doubles, 2, "at most the pool's two running jobs ran twice")

	require.NoError(t, c.Restart(victim))
	requireCaughtUp(ctx, t, js, jobs)
}

// startCluster starts a cluster of three servers and connects to the
// first, reconnecting for as long as the test runs.
func startCluster(t *testing.T) (*embedded.Cluster, *nats.Conn) {
	t.Helper()
	c, err := embedded.StartCluster(3, embedded.Options{StoreDir: t.TempDir()})
	require.NoError(t, err)
	t.Cleanup(c.Shutdown)
	return c, dialCluster(t, strings.Split(c.URLs(), ",")[0])
}

// dialCluster connects to urls, reconnecting for as long as the test runs.
func dialCluster(t *testing.T, urls string) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect(urls, nats.DontRandomize(), nats.MaxReconnects(-1), nats.ReconnectWait(20*time.Millisecond))
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	return nc
}

// requireThreeReplicas checks that each stream of the queue, and its
// consumer, is kept by three servers.
func requireThreeReplicas(ctx context.Context, t *testing.T, js jetstream.JetStream) {
	t.Helper()
	for _, name := range clusterStreams {
		s, err := js.Stream(ctx, name)
		require.NoError(t, err)
		info, err := s.Info(ctx)
		require.NoError(t, err)
		assert.Equal(t, 3, info.Config.Replicas, name)
		require.NotNil(t, info.Cluster, name)
		assert.Len(t, info.Cluster.Replicas, 2, "%s: a leader and two replicas", name)
	}
	cons, err := js.Consumer(ctx, "OFFLOAD_JOBS_cluster", "workers")
	require.NoError(t, err)
	info, err := cons.Info(ctx)
	require.NoError(t, err)
	require.NotNil(t, info.Cluster)
	assert.Len(t, info.Cluster.Replicas, 2, "the consumer: a leader and two replicas")
}

// leaderOf is the index of the server leading stream name.
func leaderOf(ctx context.Context, t *testing.T, js jetstream.JetStream, name string) int {
	t.Helper()
	s, err := js.Stream(ctx, name)
	require.NoError(t, err)
	info, err := s.Info(ctx)
	require.NoError(t, err)
	var i int
	_, err = fmt.Sscanf(info.Cluster.Leader, "offload-embedded-%d", &i)
	require.NoError(t, err, info.Cluster.Leader)
	return i
}

// makeLead makes server i the leader of the work stream and of its
// consumer, asking their leaders to step down in its favour.
func makeLead(ctx context.Context, t *testing.T, nc *nats.Conn, js jetstream.JetStream, i int) {
	t.Helper()
	name := fmt.Sprintf("offload-embedded-%d", i)
	req := []byte(`{"placement":{"preferred":"` + name + `"}}`)
	consumerLeader := func() string {
		cons, err := js.Consumer(ctx, "OFFLOAD_JOBS_cluster", "workers")
		if err != nil {
			return ""
		}
		info, err := cons.Info(ctx)
		if err != nil || info.Cluster == nil {
			return ""
		}
		return info.Cluster.Leader
	}
	for subject, leader := range map[string]func() string{
		"$JS.API.STREAM.LEADER.STEPDOWN.OFFLOAD_JOBS_cluster": func() string {
			return fmt.Sprintf("offload-embedded-%d", leaderOf(ctx, t, js, "OFFLOAD_JOBS_cluster"))
		},
		"$JS.API.CONSUMER.LEADER.STEPDOWN.OFFLOAD_JOBS_cluster.workers": consumerLeader,
	} {
		require.Eventually(t, func() bool {
			if leader() == name {
				return true
			}
			_, _ = nc.RequestWithContext(ctx, subject, req)
			return false
		}, 20*time.Second, 200*time.Millisecond, "%s leads after %s", name, subject)
	}
}

// led lists what server i leads, for the log.
func led(ctx context.Context, t *testing.T, js jetstream.JetStream, i int) []string {
	t.Helper()
	var names []string
	for _, name := range clusterStreams {
		if leaderOf(ctx, t, js, name) == i {
			names = append(names, name)
		}
	}
	cons, err := js.Consumer(ctx, "OFFLOAD_JOBS_cluster", "workers")
	require.NoError(t, err)
	info, err := cons.Info(ctx)
	require.NoError(t, err)
	if info.Cluster.Leader == fmt.Sprintf("offload-embedded-%d", i) {
		names = append(names, "consumer workers")
	}
	return names
}

// requireCaughtUp waits until every replica of every stream is current
// with its leader, and checks the work stream empty and a status record
// per job.
func requireCaughtUp(ctx context.Context, t *testing.T, js jetstream.JetStream, jobs int) {
	t.Helper()
	for _, name := range clusterStreams {
		s, err := js.Stream(ctx, name)
		require.NoError(t, err)
		var info *jetstream.StreamInfo
		require.Eventually(t, func() bool {
			info, err = s.Info(ctx)
			if err != nil || info.Cluster == nil || len(info.Cluster.Replicas) != 2 {
				return false
			}
			for _, r := range info.Cluster.Replicas {
				if !r.Current || r.Offline || r.Lag != 0 {
					return false
				}
			}
			return true
		}, 20*time.Second, 50*time.Millisecond, "%s: the restarted server catches up", name)
		switch name {
		case "OFFLOAD_JOBS_cluster":
			assert.Zero(t, info.State.Msgs, "every job acked")
		case "KV_OFFLOAD_JOBS_cluster_STATUS":
			assert.EqualValues(t, jobs, info.State.Msgs, "one status record per job")
		}
	}
}
