package pool_test

import (
	"context"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/internal/programtest"
	"github.com/offloadgo/offload/internal/testkit"
	"github.com/offloadgo/offload/pool"
)

// threadNices returns the distinct nice values of this process's threads,
// read from /proc (a nice value is a thread's on Linux).
func threadNices() ([]int, error) { return threadNicesOf("self") }

// threadNicesOf is threadNices of process pid ("self", or a number).
func threadNicesOf(pid string) ([]int, error) {
	tasks, err := os.ReadDir("/proc/" + pid + "/task")
	if err != nil {
		return nil, err
	}
	var nices []int
	for _, task := range tasks {
		stat, err := os.ReadFile("/proc/" + pid + "/task/" + task.Name() + "/stat")
		if os.IsNotExist(err) {
			continue // the thread has exited
		}
		if err != nil {
			return nil, err
		}
		// Fields after the command's closing parenthesis start at the
		// third (state); the nice value is the nineteenth.
		fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		nice, err := strconv.Atoi(fields[19-3])
		if err != nil {
			return nil, err
		}
		if !slices.Contains(nices, nice) {
			nices = append(nices, nice)
		}
	}
	slices.Sort(nices)
	return nices, nil
}

// procThreadNices first makes the worker start new threads (goroutines
// locked to their threads, all alive at once), then reports the nice
// values of all its threads and whether its pool's request is still in
// its environment.
var procThreadNices = pool.Register("proc.threadnices", func(context.Context, struct{}) (nicesSeen, error) {
	var started, release sync.WaitGroup
	release.Add(1)
	for range 4 {
		started.Add(1)
		go func() {
			runtime.LockOSThread() // never unlocked: the thread exits with the goroutine
			started.Done()
			release.Wait()
		}()
	}
	started.Wait()
	nices, err := threadNices()
	release.Done()
	_, leaked := os.LookupEnv("OFFLOAD_WORKER_NICE")
	return nicesSeen{Nices: nices, EnvLeft: leaked}, err
})

type nicesSeen struct {
	Nices   []int
	EnvLeft bool
}

// TestWorkerNice: SubprocessOptions.Nice raises every thread of a worker
// process, including threads started by the task, by the increment over
// the pool's own nice value; 0 leaves them at the pool's.
func TestWorkerNice(t *testing.T) {
	base, err := threadNices()
	require.NoError(t, err)
	require.Len(t, base, 1, "this test process's threads share one nice value")
	for _, nice := range []int{0, 7} {
		t.Run(strconv.Itoa(nice), func(t *testing.T) {
			p, _ := newProcPool(t, pool.Options{Workers: 1, MinWorkers: 1,
				Subprocess: pool.SubprocessOptions{Nice: nice}})
			got, err := pool.Run(testCtx(t), p, procThreadNices, struct{}{})
			require.NoError(t, err)
			assert.Equal(t, nicesSeen{Nices: []int{min(base[0]+nice, 19)}}, got)
		})
	}
}

func TestWorkerNiceRefusesOutOfRange(t *testing.T) {
	for _, nice := range []int{-1, 20} {
		_, err := pool.New(pool.Options{Isolation: pool.Subprocess, Subprocess: pool.SubprocessOptions{Nice: nice}})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "Subprocess.Nice is "+strconv.Itoa(nice)+", want 0..19")
	}
}

// TestProgramNice: Nice holds for a Command's program too, which has no
// Main of ours to apply it: the pool sets every thread the program has
// once it said hello, and later threads inherit it.
func TestProgramNice(t *testing.T) {
	base, err := threadNices()
	require.NoError(t, err)
	require.Len(t, base, 1, "this test process's threads share one nice value")
	eachLanguage(t, func(t *testing.T, l testkit.Program) {
		p := newProgramPool(t, l, pool.Options{Subprocess: pool.SubprocessOptions{Nice: 5}})
		out, err := pool.Run(testkit.Ctx(t), p, programtest.PID, programtest.None{})
		require.NoError(t, err)
		got, err := threadNicesOf(strconv.Itoa(out.PID))
		require.NoError(t, err)
		assert.Equal(t, []int{min(base[0]+5, 19)}, got)
	})
}
