package pool

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/offloadgo/offload/internal/subproc"
	"github.com/offloadgo/offload/internal/transport"
)

// What this package declares for its go doc to read without internal
// names mirrors the seam's own values: a mirror that drifts fails here.
func TestMirrorsMatchTheSeam(t *testing.T) {
	t.Parallel()
	assert.EqualValues(t, subproc.DefaultMaxPayload, DefaultMaxPayload)
	assert.EqualValues(t, subproc.MaxPayloadLimit, MaxPayloadLimit)
	for kind, seam := range map[WorkerEventKind]transport.EventKind{
		WorkerStarted: transport.Started, WorkerStartFailed: transport.StartFailed, WorkerRecycled: transport.Recycled,
		WorkerTerminated: transport.Terminated, WorkerCrashed: transport.Crashed, WorkerRetired: transport.Retired,
	} {
		assert.EqualValues(t, seam, kind, "%v", kind)
	}
	assert.EqualValues(t, transport.KindsEnd, WorkerSlowTask,
		"the pool's own kinds follow the seam's: a kind added to the seam needs its mirror here, before WorkerSlowTask")
	for mine, seam := range map[error]error{
		ErrQueueFull: transport.ErrQueueFull, ErrClosed: transport.ErrClosed, ErrTerminated: transport.ErrTerminated,
		ErrWorkerCrashed: transport.ErrWorkerCrashed, ErrNodeLost: transport.ErrNodeLost, ErrUnknownTask: transport.ErrUnknownTask,
		ErrPayloadTooLarge: transport.ErrPayloadTooLarge, ErrGoexit: transport.ErrGoexit,
	} {
		assert.True(t, mine == seam, "%v: one value, so that errors.Is matches across the seam", mine)
	}
}
