package natsremote_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/internal/programtest"
	"github.com/offloadgo/offload/internal/testkit"
	"github.com/offloadgo/offload/natsremote"
	"github.com/offloadgo/offload/natsremote/embedded"
	"github.com/offloadgo/offload/pool"
)

// xMissing is a task the test workers do not serve.
var xMissing = pool.Extern[programtest.None, programtest.None]("nr.not served by the program")

// programNodeOptions serves pool name with a pool of workers of l's
// program.
func programNodeOptions(t testing.TB, l testkit.Program, name string, workers int) natsremote.ServeOptions {
	return natsremote.ServeOptions{Pool: name, Local: pool.Options{
		Workers:   workers,
		Isolation: pool.Subprocess,
		Subprocess: pool.SubprocessOptions{
			Command:        l.Command(t, l.Worker),
			TerminateGrace: 5 * time.Second,
		},
	}}
}

// A node whose pool runs a program serves the program's tasks to a Remote
// pool: the JSON and the blob cross both hops, an exception reaches the
// caller with its type and traceback, a cancel stops the task on the node
// within its grace (its process kept), and the program's processes end
// with the node.
func TestProgramNodeRunsExternTasks(t *testing.T) {
	t.Parallel()
	for _, l := range testkit.Programs {
		t.Run(l.Name, func(t *testing.T) {
			t.Parallel()
			name := "program-" + l.Name
			s := startServer(t, embedded.Options{MaxPayload: 8 << 20})
			n := serve(t, s, programNodeOptions(t, l, name, 1))
			p := remotePool(t, connect(t, s), name, pool.Options{Workers: 2})
			waitNodes(t, p, 1)
			ctx := testCtx(t)

			programtest.CheckRoundTrips(t, ctx, p)

			_, err := pool.Run(ctx, p, xMissing, programtest.None{})
			require.ErrorIs(t, err, pool.ErrUnknownTask, "a name the program's hello does not list")
			_, err = pool.Run(ctx, p, add, [2]int{1, 2})
			require.ErrorIs(t, err, pool.ErrUnknownTask, "a Go task on a node of a program")

			before, err := pool.Run(ctx, p, programtest.PID, programtest.None{})
			require.NoError(t, err)
			short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
			defer cancel()
			_, err = pool.Run(short, p, programtest.Sleep, programtest.SecondsIn{Seconds: 60})
			require.ErrorIs(t, err, pool.ErrTerminated)
			require.ErrorIs(t, err, context.DeadlineExceeded)
			after, err := pool.Run(ctx, p, programtest.PID, programtest.None{})
			require.NoError(t, err)
			assert.Equal(t, before.PID, after.PID, "a task that stopped within its grace keeps its process")

			n.Stop()
			require.NoError(t, n.Wait(t))
			assert.True(t, testkit.ProcessReaped(after.PID), "the program's process %d ends with the node", after.PID)
		})
	}
}

// One Remote pool sends Go tasks and a program's tasks to the nodes that
// serve each: a node refuses the other kind ("unknown"), and the call goes
// to the other node.
func TestGoAndProgramNodesServeOnePool(t *testing.T) {
	t.Parallel()
	l := testkit.Programs[0]
	s := startServer(t, embedded.Options{})
	serve(t, s, natsremote.ServeOptions{Pool: "mixed", Name: "go", Local: pool.Options{Workers: 1}})
	serve(t, s, programNodeOptions(t, l, "mixed", 1))
	p := remotePool(t, connect(t, s), "mixed", pool.Options{Workers: 2})
	waitNodes(t, p, 2)
	ctx := testCtx(t)
	for i := range 20 {
		sum, err := pool.Run(ctx, p, add, [2]int{i, 1})
		require.NoError(t, err)
		assert.Equal(t, i+1, sum)
		out, err := pool.Run(ctx, p, programtest.Echo, programtest.EchoIO{Text: "x", N: i})
		require.NoError(t, err)
		assert.Equal(t, programtest.EchoIO{Text: "x", N: i}, out)
	}
	assert.EqualValues(t, 40, p.Stats().Completed)
}

// A node whose program never starts does not serve: Serve says why,
// naming the command.
func TestProgramNodeThatCannotStart(t *testing.T) {
	t.Parallel()
	s := startServer(t, embedded.Options{})
	o := natsremote.ServeOptions{Pool: "noprogram", Logger: quiet, Heartbeat: testHeartbeat, Local: pool.Options{
		Workers: 1, Isolation: pool.Subprocess,
		Subprocess: pool.SubprocessOptions{Command: []string{"/nonexistent/offload-worker"}},
	}}
	err := natsremote.Serve(testCtx(t), connect(t, s), o)
	require.ErrorIs(t, err, pool.ErrWorkerStartFailed)
	assert.Contains(t, err.Error(), "/nonexistent/offload-worker")
}

// A program that dies under a call on a node, or that allocates past the
// node's MemoryLimit, fails that call only, with ErrWorkerCrashed and the
// node's account (the exit status, the tail of its stderr); the node
// serves on with a new process.
func TestProgramNodeWorkerFailures(t *testing.T) {
	t.Parallel()
	testkit.SkipOffLinux(t, "MemoryLimit")
	l := testkit.Programs[0]
	s := startServer(t, embedded.Options{})
	o := programNodeOptions(t, l, "program-failures", 1)
	o.Name = "n1"
	o.Local.Subprocess.MemoryLimit = 100 << 20
	serve(t, s, o)
	p := remotePool(t, connect(t, s), "program-failures", pool.Options{Workers: 1})
	waitNodes(t, p, 1)
	ctx := testCtx(t)

	_, err := pool.Run(ctx, p, programtest.Exit, programtest.CodeIn{Code: 3})
	require.ErrorIs(t, err, pool.ErrWorkerCrashed)
	assert.Contains(t, err.Error(), "on node n1-")
	assert.Contains(t, err.Error(), "status 3")
	assert.Contains(t, err.Error(), "dying now")

	_, err = pool.Run(ctx, p, programtest.Alloc, programtest.AllocIn{MiB: 250, Seconds: 60})
	require.ErrorIs(t, err, pool.ErrWorkerCrashed)
	assert.Contains(t, err.Error(), "memory limit")
	t.Logf("memory: %v", err)

	out, err := pool.Run(ctx, p, programtest.Echo, programtest.EchoIO{Text: "still serving"})
	require.NoError(t, err)
	assert.Equal(t, "still serving", out.Text)
}

// passTracer carries the traceparent a ctx holds (see withTraceparent)
// into calls, and back into a task's ctx; it makes no spans.
type passTracer struct{}

type traceparentKey struct{}

func withTraceparent(ctx context.Context, tp string) context.Context {
	return context.WithValue(ctx, traceparentKey{}, tp)
}

func (passTracer) StartTask(ctx context.Context, _ pool.TaskInfo) (context.Context, pool.TaskSpan) {
	return ctx, noSpan{}
}

func (passTracer) Inject(ctx context.Context, carrier map[string]string) {
	if tp, ok := ctx.Value(traceparentKey{}).(string); ok {
		carrier["traceparent"] = tp
	}
}

func (passTracer) Extract(ctx context.Context, carrier map[string]string) context.Context {
	return withTraceparent(ctx, carrier["traceparent"])
}

type noSpan struct{}

func (noSpan) Dequeued(time.Duration) {}
func (noSpan) End(error)              {}

// The caller's trace context reaches the program through a node whose
// pool has a Tracer: the node continues the trace, and its pool sends it
// on in the program's call.
func TestProgramNodeCarriesTheTrace(t *testing.T) {
	t.Parallel()
	s := startServer(t, embedded.Options{})
	o := programNodeOptions(t, testkit.Programs[0], "program-trace", 1)
	o.Local.Tracer = passTracer{}
	serve(t, s, o)
	p := remotePool(t, connect(t, s), "program-trace", pool.Options{Workers: 1, Tracer: passTracer{}})
	waitNodes(t, p, 1)
	const tp = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	out, err := pool.Run(withTraceparent(testCtx(t), tp), p, programtest.Trace, programtest.None{})
	require.NoError(t, err)
	assert.Equal(t, tp, out.Trace["traceparent"])
}
