package pool_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/pool"
)

// Closures run as registered tasks do: results, errors, panics, the books
// (under FuncName, or a Closures' name) and the pprof labels.
func TestRunFunc(t *testing.T) {
	t.Parallel()
	p := newPool(t, pool.Options{Workers: 2})
	ctx := testCtx(t)
	x := 20
	out, err := pool.RunFunc(ctx, p, func(context.Context) (int, error) { return x + 1, nil })
	require.NoError(t, err)
	assert.Equal(t, 21, out)

	bad := errors.New("bad")
	_, err = pool.RunFunc(ctx, p, func(context.Context) (int, error) { return 0, bad })
	assert.ErrorIs(t, err, bad, "a closure's error is its caller's, as it is (it never crossed a process)")

	_, err = pool.RunFunc(ctx, p, func(context.Context) (string, error) { panic("oops") })
	var pe *pool.PanicError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "oops", pe.Value)
	assert.Equal(t, pool.FuncName, pe.Task)

	f, err := pool.SubmitFunc(ctx, p, func(context.Context) (int, error) { return 7, nil })
	require.NoError(t, err)
	out, err = f.Wait()
	require.NoError(t, err)
	assert.Equal(t, 7, out)

	blur := pool.NewClosures[string]("blur")
	prof, err := blur.Run(ctx, p, func(context.Context) (string, error) {
		done := make(chan string)
		go func() { done <- profileOf() }()
		return <-done, nil
	})
	require.NoError(t, err)
	assert.Contains(t, prof, `labels: {"isolation":"InProcess", "task":"blur"}`)

	st := p.Stats()
	assert.Equal(t, pool.TaskStats{Completed: 2, Failed: 2, RunTime: st.Tasks[pool.FuncName].RunTime}, st.Tasks[pool.FuncName],
		"RunFunc's and SubmitFunc's closures, of any Out, count under FuncName")
	assert.EqualValues(t, 1, st.Tasks["blur"].Completed, "a Closures' count under its name")
	assert.EqualValues(t, 3, st.Completed)
	assert.EqualValues(t, 2, st.Failed)
}

// A closure is admitted as any task is: at once or ErrQueueFull; and its
// caller's ctx reaches it and ends its call.
func TestRunFuncAdmissionAndCancel(t *testing.T) {
	t.Parallel()
	p := newPool(t, pool.Options{Workers: 1, MaxQueue: pool.NoQueue})
	started := make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	held, err := pool.SubmitFunc(ctx, p, func(ctx context.Context) (int, error) {
		close(started)
		<-ctx.Done()
		return 0, context.Cause(ctx)
	})
	require.NoError(t, err)
	<-started
	var ran atomic.Bool
	_, err = pool.RunFunc(testCtx(t), p, func(context.Context) (int, error) { ran.Store(true); return 0, nil })
	require.ErrorIs(t, err, pool.ErrQueueFull)
	cancel()
	_, err = held.Wait()
	require.ErrorIs(t, err, context.Canceled)
	assert.False(t, ran.Load(), "a rejected closure never runs")
	st := p.Stats()
	assert.EqualValues(t, 1, st.Rejected)
	assert.EqualValues(t, 1, st.Canceled)
}

// A closure can't cross a process: on a Subprocess pool RunFunc and
// SubmitFunc fail at once, saying to Register the task, and nothing runs.
// A nil func is refused too.
func TestRunFuncRefusedOutOfProcess(t *testing.T) {
	t.Parallel()
	requireSubprocess(t)
	p, err := pool.New(pool.Options{Workers: 1, Isolation: pool.Subprocess})
	require.NoError(t, err)
	defer p.Close()
	var ran atomic.Bool
	fn := func(context.Context) (int, error) { ran.Store(true); return 1, nil }
	_, err = pool.RunFunc(testCtx(t), p, fn)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "pool.Register")
	_, err = pool.NewClosures[int]("named").Submit(testCtx(t), p, fn)
	require.Error(t, err)
	assert.False(t, ran.Load())
	assert.EqualValues(t, 2, p.Stats().Rejected)
	assert.Zero(t, p.Stats().Workers, "no worker process was started for it")

	q := newPool(t, pool.Options{Workers: 1})
	_, err = pool.RunFunc[int](testCtx(t), q, nil)
	assert.ErrorIs(t, err, pool.ErrUnknownTask)
	_, err = pool.Closures[int]{}.Run(testCtx(t), q, fn)
	assert.ErrorIs(t, err, pool.ErrUnknownTask, "the zero Closures")
	assert.Panics(t, func() { pool.NewClosures[int]("") })
}
