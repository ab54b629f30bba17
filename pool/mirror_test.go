package pool

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/offloadgo/offload/internal/seam"
	"github.com/offloadgo/offload/internal/subproc"
)

// What this package declares for its go doc to read without internal
// names mirrors the seam's own values: a mirror that drifts fails here.
func TestMirrorsMatchTheSeam(t *testing.T) {
	t.Parallel()
	assert.EqualValues(t, subproc.DefaultMaxPayload, DefaultMaxPayload)
	assert.EqualValues(t, subproc.MaxPayloadLimit, MaxPayloadLimit)
	for kind, seam := range map[WorkerEventKind]seam.EventKind{
		WorkerStarted: seam.Started, WorkerStartFailed: seam.StartFailed, WorkerRecycled: seam.Recycled,
		WorkerTerminated: seam.Terminated, WorkerCrashed: seam.Crashed, WorkerRetired: seam.Retired,
		NodeJoined: seam.NodeJoined, NodeLeft: seam.NodeLeft, NodeLost: seam.NodeLost, NodeTaskCanceled: seam.NodeTaskCanceled,
	} {
		assert.EqualValues(t, seam, kind, "%v", kind)
	}
	assert.EqualValues(t, seam.KindsEnd, WorkerSlowTask,
		"the pool's own kinds follow the seam's: a kind added to the seam needs its mirror here, before WorkerSlowTask")
	for mine, seam := range map[error]error{
		ErrQueueFull: seam.ErrQueueFull, ErrClosed: seam.ErrClosed, ErrTerminated: seam.ErrTerminated,
		ErrWorkerCrashed: seam.ErrWorkerCrashed, ErrNodeLost: seam.ErrNodeLost, ErrUnknownTask: seam.ErrUnknownTask,
		ErrPayloadTooLarge: seam.ErrPayloadTooLarge, ErrGoexit: seam.ErrGoexit,
	} {
		assert.True(t, mine == seam, "%v: one value, so that errors.Is matches across the seam", mine)
	}
}
