package pool_test

import (
	"context"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/pool"
)

// startGOMAXPROCS is this process's GOMAXPROCS as the runtime chose it,
// before -test.cpu changed it: what a worker process left the runtime's
// default gets too.
var startGOMAXPROCS = runtime.GOMAXPROCS(0)

// procsSeen is what a worker process's task sees of its GOMAXPROCS.
type procsSeen struct {
	Procs int    // runtime.GOMAXPROCS(0)
	Env   string // $GOMAXPROCS, "unset" if it is
	// Offload lists the OFFLOAD_ variables in the task's environment,
	// which the pool's request for a GOMAXPROCS must not leave behind.
	Offload []string
}

var procMaxProcs = pool.Register("proc.gomaxprocs", func(context.Context, struct{}) (procsSeen, error) {
	s := procsSeen{Procs: runtime.GOMAXPROCS(0), Env: "unset", Offload: []string{}}
	if v, ok := os.LookupEnv("GOMAXPROCS"); ok {
		s.Env = v
	}
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "OFFLOAD_") {
			s.Offload = append(s.Offload, kv)
		}
	}
	return s, nil
})

// TestWorkerGOMAXPROCS: a worker process runs its tasks with the
// GOMAXPROCS SubprocessOptions.GOMAXPROCS asks for — 1 by default, unless
// the pool's environment sets GOMAXPROCS, which the worker inherits —
// without changing the GOMAXPROCS variable the task and its own children
// see.
func TestWorkerGOMAXPROCS(t *testing.T) {
	tests := []struct {
		name      string
		option    int
		parentEnv string // "" leaves $GOMAXPROCS unset in the pool's process
		want      procsSeen
	}{
		{"default is one", 0, "", procsSeen{Procs: 1, Env: "unset"}},
		{"set", 3, "", procsSeen{Procs: 3, Env: "unset"}},
		{"set wins over the environment", 3, "2", procsSeen{Procs: 3, Env: "2"}},
		{"environment is inherited", 0, "2", procsSeen{Procs: 2, Env: "2"}},
		{"runtime default", -1, "", procsSeen{Procs: startGOMAXPROCS, Env: "unset"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.parentEnv != "" {
				t.Setenv("GOMAXPROCS", tt.parentEnv)
			} else if v, ok := os.LookupEnv("GOMAXPROCS"); ok {
				t.Setenv("GOMAXPROCS", v) // restored after the test
				require.NoError(t, os.Unsetenv("GOMAXPROCS"))
				if tt.option < 0 {
					tt.want.Procs = runtime.NumCPU() // the runtime's default, not the inherited one
				}
			}
			p, _ := newProcPool(t, pool.Options{Workers: 1, MinWorkers: 1,
				Subprocess: pool.SubprocessOptions{GOMAXPROCS: tt.option}})
			got, err := pool.Run(testCtx(t), p, procMaxProcs, struct{}{})
			require.NoError(t, err)
			tt.want.Offload = []string{}
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestWorkerGOMAXPROCSRefusesBelowMinusOne(t *testing.T) {
	_, err := pool.New(pool.Options{Isolation: pool.Subprocess, Subprocess: pool.SubprocessOptions{GOMAXPROCS: -2}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "Subprocess.GOMAXPROCS is -2")
}
