package pool_test

import (
	"bytes"
	"context"
	"runtime/pprof"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/pool"
)

// profileOf returns the goroutine profile as text, labels included.
func profileOf() string {
	var b bytes.Buffer
	_ = pprof.Lookup("goroutine").WriteTo(&b, 1)
	return b.String()
}

// selfProfile returns the goroutine profile as the task sees it, from a
// goroutine it starts too (which inherits the labels).
var selfProfile = pool.Register("test.self-profile", func(context.Context, struct{}) (string, error) {
	done := make(chan string)
	go func() { done <- profileOf() }()
	return <-done, nil
})

// Each task runs under the pprof labels task=NAME and isolation=KIND, so
// that go tool pprof -tagfocus task=NAME attributes CPU to it; goroutines
// it starts inherit them, and the worker is unlabelled between tasks.
func TestTasksRunUnderProfileLabels(t *testing.T) {
	t.Parallel()
	eachIsolation(t, func(t *testing.T, iso pool.Isolation) {
		p := newIsolatedPool(t, iso, pool.Options{Workers: 1})
		prof, err := pool.Run(testCtx(t), p, selfProfile, struct{}{})
		require.NoError(t, err)
		assert.Contains(t, prof, `labels: {"isolation":"`+iso.String()+`", "task":"test.self-profile"}`)
	})
	t.Run("between tasks", func(t *testing.T) {
		p := newPool(t, pool.Options{Workers: 1, MinWorkers: 1})
		_, err := pool.Run(testCtx(t), p, add, [2]int{1, 2})
		require.NoError(t, err)
		assert.NotContains(t, profileOf(), `"task":"test.add"`, "the parked worker keeps no task's labels")
	})
}
