package pool_test

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/internal/programtest"
	"github.com/offloadgo/offload/internal/testkit"
	"github.com/offloadgo/offload/pool"
)

// ProgramTasks lists the tasks the program's hello names, sorted, before
// any call (starting a process to hear it) and after; it fails on a pool
// of Go workers, and for a program that does not start.
func TestProgramTasks(t *testing.T) {
	eachLanguage(t, func(t *testing.T, l testkit.Program) {
		p := newProgramPool(t, l, pool.Options{})
		names, err := p.ProgramTasks(testkit.Ctx(t))
		require.NoError(t, err)
		assert.True(t, slices.IsSorted(names), "%q", names)
		for _, n := range []string{"echo", "blob", "fail", "sleep", "pid"} {
			assert.Contains(t, names, n)
		}
		assert.NotContains(t, names, xMissing.Name())

		_, err = pool.Run(testkit.Ctx(t), p, programtest.Echo, programtest.EchoIO{Text: "a"})
		require.NoError(t, err)
		again, err := p.ProgramTasks(testkit.Ctx(t))
		require.NoError(t, err)
		assert.Equal(t, names, again)
	})

	_, err := newPool(t, pool.Options{Workers: 1}).ProgramTasks(testkit.Ctx(t))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "Subprocess.Command")

	missing := newPool(t, pool.Options{Workers: 1, Isolation: pool.Subprocess,
		Subprocess: pool.SubprocessOptions{Command: []string{"offload-no-such-program"}}})
	_, err = missing.ProgramTasks(testkit.Ctx(t))
	require.ErrorIs(t, err, pool.ErrWorkerStartFailed)
	assert.Contains(t, err.Error(), "offload-no-such-program")
}
