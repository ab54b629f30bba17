package pool_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/cancel"
	"github.com/offloadgo/offload/internal/programtest"
	"github.com/offloadgo/offload/internal/testkit"
	"github.com/offloadgo/offload/pool"
)

// TestProgramCrashMidCall: only the call a program died under fails, with
// its exit status and the tail of its stderr; the next goes to a new
// process.
func TestProgramCrashMidCall(t *testing.T) {
	eachLanguage(t, func(t *testing.T, l testkit.Program) {
		p := newProgramPool(t, l, pool.Options{})
		before, err := pool.Run(testkit.Ctx(t), p, programtest.PID, programtest.None{})
		require.NoError(t, err)

		_, err = pool.Run(testkit.Ctx(t), p, programtest.Exit, programtest.CodeIn{Code: 3})
		require.ErrorIs(t, err, pool.ErrWorkerCrashed)
		var exit *cancel.Exit
		require.ErrorAs(t, err, &exit)
		assert.Equal(t, 3, exit.Code)
		assert.Contains(t, exit.Stderr, "dying now")
		assert.Contains(t, err.Error(), "dying now")

		after, err := pool.Run(testkit.Ctx(t), p, programtest.PID, programtest.None{})
		require.NoError(t, err)
		assert.NotEqual(t, before.PID, after.PID)
		assert.Equal(t, uint64(1), p.Stats().Crashed)
	})
}

// TestProgramMemoryLimit: a program that allocates past MemoryLimit is
// killed, and the call fails naming the limit.
func TestProgramMemoryLimit(t *testing.T) {
	testkit.SkipOffLinux(t, "MemoryLimit")
	eachLanguage(t, func(t *testing.T, l testkit.Program) {
		p := newProgramPool(t, l, pool.Options{Subprocess: pool.SubprocessOptions{MemoryLimit: 300 << 20}})
		_, err := pool.Run(testkit.Ctx(t), p, programtest.Alloc, programtest.AllocIn{MiB: 600, Seconds: 60})
		require.ErrorIs(t, err, pool.ErrWorkerCrashed)
		var exit *cancel.Exit
		require.ErrorAs(t, err, &exit)
		assert.Equal(t, cancel.KilledByMemoryLimit, exit.Killed)
		assert.Greater(t, exit.RSS, int64(300<<20))

		out, err := pool.Run(testkit.Ctx(t), p, programtest.Echo, programtest.EchoIO{Text: "still serving"})
		require.NoError(t, err)
		assert.Equal(t, "still serving", out.Text)
	})
}

// TestProgramStartFailures: a program that can't serve fails the call
// with ErrWorkerStartFailed, naming the command and why.
func TestProgramStartFailures(t *testing.T) {
	python := testkit.Programs[0]
	script := func(name string) []string { return python.Command(t, name) }
	for _, tc := range []struct {
		name    string
		command []string
		want    []string
	}{
		{"missing", []string{"offload-no-such-program"}, []string{`"offload-no-such-program"`, "executable file not found"}},
		{"exits", script("exitnow.py"), []string{"exitnow.py", "cannot load model", "status 3"}},
		{"silent", script("nohello.py"), []string{"nohello.py", "no hello in time"}},
		{"version", script("badversion.py"), []string{"badversion.py", "protocol version 99, supervisor 1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := scriptPool(t, pool.SubprocessOptions{Command: tc.command, StartTimeout: 2 * time.Second})
			_, err := pool.Run(testkit.Ctx(t), p, programtest.Echo, programtest.EchoIO{})
			require.ErrorIs(t, err, pool.ErrWorkerStartFailed)
			for _, w := range tc.want {
				assert.Contains(t, err.Error(), w)
			}
			assert.Zero(t, p.Stats().Completed)
		})
	}
}

// TestProgramMalformedAnswer: a program that breaks the protocol is killed
// and replaced; the call fails, and nothing else does.
func TestProgramMalformedAnswer(t *testing.T) {
	p := scriptPool(t, pool.SubprocessOptions{Command: testkit.Programs[0].Command(t, "garbage.py")})
	for range 2 { // the second call goes to the replacement
		_, err := pool.Run(testkit.Ctx(t), p, programtest.Echo, programtest.EchoIO{})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "sent a bad answer")
		assert.Contains(t, err.Error(), "malformed answer")
	}
	s := p.Stats()
	assert.Equal(t, uint64(2), s.Failed)
	assert.Zero(t, s.Crashed, "the pool killed it: no crash")
}

// TestProgramRecycle: a program's answer can ask for its replacement, and
// RecycleWorkers replaces each process between calls.
func TestProgramRecycle(t *testing.T) {
	eachLanguage(t, func(t *testing.T, l testkit.Program) {
		p := newProgramPool(t, l, pool.Options{})
		asked, err := pool.Run(testkit.Ctx(t), p, programtest.Recycle, programtest.None{})
		require.NoError(t, err)
		next, err := pool.Run(testkit.Ctx(t), p, programtest.PID, programtest.None{})
		require.NoError(t, err)
		assert.NotEqual(t, asked.PID, next.PID, "the program asked to be replaced")

		require.NoError(t, p.RecycleWorkers(testkit.Ctx(t)))
		last, err := pool.Run(testkit.Ctx(t), p, programtest.PID, programtest.None{})
		require.NoError(t, err)
		assert.NotEqual(t, next.PID, last.PID, "RecycleWorkers replaced it")
		assert.Equal(t, uint64(2), p.Stats().Recycled)
		assert.Zero(t, p.Stats().Failed)
	})
}

// TestProgramMaxTasksPerWorker: the program is replaced after so many
// calls, as a Go worker is.
func TestProgramMaxTasksPerWorker(t *testing.T) {
	eachLanguage(t, func(t *testing.T, l testkit.Program) {
		p := newProgramPool(t, l, pool.Options{Subprocess: pool.SubprocessOptions{MaxTasksPerWorker: 2}})
		var pids []int
		for range 4 {
			out, err := pool.Run(testkit.Ctx(t), p, programtest.PID, programtest.None{})
			require.NoError(t, err)
			pids = append(pids, out.PID)
		}
		assert.Equal(t, pids[0], pids[1])
		assert.Equal(t, pids[2], pids[3])
		assert.NotEqual(t, pids[1], pids[2])
	})
}

// TestProgramDirEnvAndTrace: the program runs in Dir with Env added to
// the pool's environment, and gets the caller's trace context.
func TestProgramDirEnvAndTrace(t *testing.T) {
	eachLanguage(t, func(t *testing.T, l testkit.Program) {
		dir := t.TempDir()
		tracer := &fakeTracer{}
		p := newProgramPool(t, l, pool.Options{Tracer: tracer,
			Subprocess: pool.SubprocessOptions{Dir: dir, Env: []string{"MODEL=small"}}})
		env, err := pool.Run(testkit.Ctx(t), p, programtest.Env, programtest.None{})
		require.NoError(t, err)
		want, err := filepath.EvalSymlinks(dir)
		require.NoError(t, err)
		assert.Equal(t, want, env.Dir)
		assert.Equal(t, "small", env.Model)

		tr, err := pool.Run(testkit.Ctx(t), p, programtest.Trace, programtest.None{})
		require.NoError(t, err)
		spans := tracer.spans
		require.NotEmpty(t, spans)
		assert.Equal(t, spans[len(spans)-1].id, tr.Trace["test-span"])
	})
}

// TestProgramOptions: what New refuses with a Command, and the copies it
// keeps.
func TestProgramOptions(t *testing.T) {
	_, err := pool.New(pool.Options{Isolation: pool.Subprocess, Subprocess: pool.SubprocessOptions{Command: []string{"python3"}, GOMAXPROCS: 2}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "GOMAXPROCS")
	_, err = pool.New(pool.Options{Isolation: pool.Subprocess, Subprocess: pool.SubprocessOptions{Env: []string{"A=1"}}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "Command")
	_, err = pool.New(pool.Options{Subprocess: pool.SubprocessOptions{Command: []string{"python3"}}})
	require.Error(t, err, "a Command without Isolation Subprocess")
	_, err = pool.New(pool.Options{Isolation: pool.Subprocess, Subprocess: pool.SubprocessOptions{Command: []string{""}}})
	require.Error(t, err)

	command := []string{"python3", "worker.py"}
	p := newPool(t, pool.Options{Workers: 1, Isolation: pool.Subprocess, Subprocess: pool.SubprocessOptions{Command: command}})
	command[1] = "changed.py"
	got := p.Options().Subprocess.Command
	assert.Equal(t, []string{"python3", "worker.py"}, got, "New keeps a copy")
	got[1] = "changed too"
	assert.Equal(t, "worker.py", p.Options().Subprocess.Command[1], "Options returns a copy")
}

// TestProgramWorkersAndLimits: MinWorkers warms the program's processes
// before any call, SetWorkers grows and shrinks them, and an input over
// MaxPayload fails before it is sent.
func TestProgramWorkersAndLimits(t *testing.T) {
	eachLanguage(t, func(t *testing.T, l testkit.Program) {
		started := make(chan pool.WorkerEvent, 8)
		p := newProgramPool(t, l, pool.Options{Workers: 2, MinWorkers: 2,
			OnWorkerEvent: func(ev pool.WorkerEvent) {
				if ev.Kind == pool.WorkerStarted {
					started <- ev
				}
			},
			Subprocess: pool.SubprocessOptions{MaxPayload: 64 << 10}})
		warm := map[int]bool{}
		for range 2 {
			select {
			case ev := <-started:
				assert.NotZero(t, ev.PID)
				assert.Positive(t, ev.Took)
				warm[ev.Worker] = true
			case <-testkit.Ctx(t).Done():
				t.Fatal("MinWorkers started no program process")
			}
		}
		assert.Len(t, warm, 2, "one process per worker, before any call")
		assert.Zero(t, p.Stats().Completed)

		_, err := pool.Run(testkit.Ctx(t), p, programtest.Blob, programtest.BlobIn{Image: make([]byte, 65<<10)})
		require.ErrorIs(t, err, pool.ErrPayloadTooLarge)
		out, err := pool.Run(testkit.Ctx(t), p, programtest.Blob, programtest.BlobIn{Image: make([]byte, 60<<10)})
		require.NoError(t, err)
		assert.Equal(t, 60<<10, out.Size)
		for _, n := range []int{65 << 10, 1 << 20} { // within the frame's slack; over the frame
			_, err = pool.Run(testkit.Ctx(t), p, programtest.Bytes, programtest.BytesIn{N: n})
			require.ErrorIs(t, err, pool.ErrPayloadTooLarge, "an output of %d bytes", n)
		}
		big, err := pool.Run(testkit.Ctx(t), p, programtest.Bytes, programtest.BytesIn{N: 60 << 10})
		require.NoError(t, err)
		assert.Len(t, big.Data, 60<<10)

		require.NoError(t, p.SetWorkers(3))
		require.NoError(t, p.SetWorkers(1))
		for i := range 4 {
			out, err := pool.Run(testkit.Ctx(t), p, programtest.Echo, programtest.EchoIO{N: i})
			require.NoError(t, err)
			assert.Equal(t, i, out.N)
		}
		assert.Zero(t, p.Stats().Crashed)
	})
}

// TestProgramUnreadCallGoesToTheReplacement: a call that a program's
// process never read (it died with the call still in its pipe) costs the
// call nothing: it goes to the next process, once.
func TestProgramUnreadCallGoesToTheReplacement(t *testing.T) {
	p := scriptPool(t, pool.SubprocessOptions{Command: testkit.Programs[0].Command(t, "deafonce.py"),
		Env: []string{"DEAF_MARK=" + filepath.Join(t.TempDir(), "mark")}})
	out, err := pool.Run(testkit.Ctx(t), p, programtest.Echo, programtest.EchoIO{Text: "once", N: 1})
	require.NoError(t, err)
	assert.Equal(t, programtest.EchoIO{Text: "once", N: 1}, out)
	s := p.Stats()
	assert.Equal(t, uint64(1), s.Crashed, "the first process exited under the call")
	assert.Equal(t, uint64(1), s.Completed)
	assert.Zero(t, s.Failed)
}

// scriptPool is a quiet one-worker Subprocess pool of the program sub
// names: the shape of the tests of programs that break the protocol.
func scriptPool(t *testing.T, sub pool.SubprocessOptions) *pool.Pool {
	t.Helper()
	return newPool(t, pool.Options{Workers: 1, Isolation: pool.Subprocess, Logger: quietLogger, Subprocess: sub})
}
