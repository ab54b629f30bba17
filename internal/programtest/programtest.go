// Package programtest is what the tests of pools of other programs share
// (package pool's, natsremote's, the benchmarks'): the tasks of
// sdk/testdata's test workers, declared once with their types — worker.py
// and worker.mjs serve the same names the same way — and the checks of a
// round trip that hold whatever carries the call, a pool of the program
// or a node of one.
package programtest

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/internal/testkit"
	"github.com/offloadgo/offload/pool"
)

// The test workers' inputs and outputs.
type (
	EchoIO struct {
		Text string
		N    int
	}
	BlobIn struct {
		Width int
		Image []byte `offload:"blob"`
	}
	BlobOut struct {
		Width int
		Size  int
		Image []byte `offload:"blob"`
	}
	SecondsIn struct{ Seconds float64 }
	SleptOut  struct{ Slept bool }
	PIDOut    struct{ PID int }
	CodeIn    struct{ Code int }
	AllocIn   struct {
		MiB     int
		Seconds float64
	}
	OKOut    struct{ OK bool }
	TraceOut struct{ Trace map[string]string }
	EnvOut   struct{ Dir, Model string }
	BytesIn  struct{ N int }
	BytesOut struct {
		Data []byte `offload:"blob"`
	}
	None struct{}
)

// The test workers' tasks (see sdk/testdata/worker.py for what each does).
var (
	Echo       = pool.Extern[EchoIO, EchoIO]("echo")
	Blob       = pool.Extern[BlobIn, BlobOut]("blob")
	Fail       = pool.Extern[None, None]("fail")
	Sleep      = pool.Extern[SecondsIn, SleptOut]("sleep")
	Stubborn   = pool.Extern[SecondsIn, SleptOut]("stubborn")
	Grandchild = pool.Extern[None, PIDOut]("grandchild")
	Print      = pool.Extern[None, OKOut]("print")
	Exit       = pool.Extern[CodeIn, None]("exit")
	Alloc      = pool.Extern[AllocIn, None]("alloc")
	Recycle    = pool.Extern[None, PIDOut]("recycle")
	PID        = pool.Extern[None, PIDOut]("pid")
	Trace      = pool.Extern[None, TraceOut]("trace")
	Env        = pool.Extern[None, EnvOut]("env")
	Bytes      = pool.Extern[BytesIn, BytesOut]("bytes")
)

// CheckRoundTrips runs echo, a 3 MiB blob each way and an exception
// through p, whose calls a test worker serves, and checks what comes
// back: the output whole, the caller's input left whole, and the
// exception's type, message and traceback in a *pool.RemoteError.
func CheckRoundTrips(t *testing.T, ctx context.Context, p *pool.Pool) {
	t.Helper()
	out, err := pool.Run(ctx, p, Echo, EchoIO{Text: "héllo", N: 42})
	require.NoError(t, err)
	assert.Equal(t, EchoIO{Text: "héllo", N: 42}, out)

	image := testkit.Counting(make([]byte, 3<<20), 7) // over workerproc's bulk size: Plain keeps it on the pipe
	b, err := pool.Run(ctx, p, Blob, BlobIn{Width: 256, Image: image})
	require.NoError(t, err)
	assert.Equal(t, 256, b.Width)
	assert.Equal(t, len(image), b.Size)
	require.Len(t, b.Image, len(image))
	assert.Equal(t, image[0], b.Image[len(image)-1])
	assert.Equal(t, image[len(image)-1], b.Image[0])
	assert.Equal(t, byte(7), image[0], "the caller's input is left whole")

	_, err = pool.Run(ctx, p, Fail, None{})
	var re *pool.RemoteError
	require.ErrorAs(t, err, &re)
	assert.Equal(t, "ValueError", re.Type)
	assert.Equal(t, "bad width 7", re.Message)
	assert.Equal(t, "fail", re.Task)
	assert.Contains(t, re.Traceback, "bad width 7")
	assert.Equal(t, "ValueError: bad width 7", err.Error())
}
