package natsjobs_test

import (
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/internal/testkit"
	"github.com/offloadgo/offload/natsjobs"
	"github.com/offloadgo/offload/pool"
)

// Status and Wait read a job's record from the status bucket's leader,
// not from whichever replica answers a direct get first: a replica may
// lag behind the leader (and the watch that Wait listens on), and a
// Wait that read an old record would never hear of the job's end. A
// mirror answering direct gets stands in for the lagging replica here:
// it holds no record at all.
func TestStatusReadsTheLeaderNotALaggingReplica(t *testing.T) {
	t.Parallel()
	q, nc := startQueue(t, natsjobs.Options{})
	ctx := testkit.Ctx(t)
	js := jetStream(t, nc)
	// The mirror answers direct gets once it has mirrored a message: it
	// mirrors one record, of no job.
	_, err := keyValue(t, nc, "OFFLOAD_JOBS_jobs_STATUS").Put(ctx, "nojob", []byte("x"))
	require.NoError(t, err)
	mirror, err := js.CreateStream(ctx, jetstream.StreamConfig{
		Name:         "LAGGING",
		Mirror:       &jetstream.StreamSource{Name: "KV_OFFLOAD_JOBS_jobs_STATUS", FilterSubject: "$KV.OFFLOAD_JOBS_jobs_STATUS.nojob"},
		MirrorDirect: true,
	})
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		info, err := mirror.Info(ctx)
		return err == nil && info.State.Msgs == 1
	}, 20*time.Second, 10*time.Millisecond)

	serve(t, q, newPool(t, pool.Options{Workers: 1}), natsjobs.ServeOptions{})
	id := requireDoubled(ctx, t, q, 4)
	for range 20 { // the mirror answers about half the direct gets
		st, err := q.Status(ctx, id)
		require.NoError(t, err)
		require.Equal(t, natsjobs.Succeeded, st.State)
		out, err := natsjobs.Wait(ctx, q, double, id)
		require.NoError(t, err, "a Wait after the job's end reads it ended")
		require.Equal(t, 8, out)
	}
}
