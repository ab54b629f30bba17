package pool_test

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/internal/testkit"
	"github.com/offloadgo/offload/pool"
)

// spanSeen returns the span ID its ctx holds: the task's own span in
// process, the caller's pool's span in a worker process whose Main
// extracts it, "" where nothing was carried.
var spanSeen = pool.Register("test.spanseen", func(ctx context.Context, _ struct{}) (string, error) {
	id, _ := ctx.Value(spanKey{}).(string)
	return id, nil
})

// With a Tracer, each task gets a span, started from the caller's ctx:
// the task's ctx is the span's, a worker takes it once, and the span ends
// with the error the caller got, before the caller hears of it.
func TestTracerGivesEachTaskASpan(t *testing.T) {
	t.Parallel()
	caller := context.WithValue(context.Background(), spanKey{}, "caller")
	for _, tc := range []struct {
		name string
		run  func(p *pool.Pool) (any, error)
		task string
		want func(t *testing.T, err error)
	}{
		{"result", func(p *pool.Pool) (any, error) { return pool.Run(caller, p, spanSeen, struct{}{}) }, "test.spanseen",
			func(t *testing.T, err error) { require.NoError(t, err) }},
		{"error", func(p *pool.Pool) (any, error) { return pool.Run(caller, p, fail, "no") }, "test.fail",
			func(t *testing.T, err error) { require.EqualError(t, err, "no") }},
		{"panic", func(p *pool.Pool) (any, error) { return pool.Run(caller, p, boom, "boom") }, "test.panic",
			func(t *testing.T, err error) {
				var pe *pool.PanicError
				require.ErrorAs(t, err, &pe)
			}},
		{"closure", func(p *pool.Pool) (any, error) {
			return pool.RunFunc(caller, p, func(ctx context.Context) (string, error) { return ctx.Value(spanKey{}).(string), nil })
		}, pool.FuncName, func(t *testing.T, err error) { require.NoError(t, err) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tracer := &fakeTracer{}
			p := newPool(t, pool.Options{Workers: 1, Tracer: tracer})
			out, err := tc.run(p)
			tc.want(t, err)
			s := tracer.only(t)
			assert.Equal(t, pool.TaskInfo{Name: tc.task, Isolation: pool.InProcess}, s.task)
			assert.Equal(t, "caller", s.parent)
			if err == nil {
				assert.Equal(t, s.id, out, "the task's ctx is its span's")
			}
			dequeued, ends := s.state()
			assert.Equal(t, 1, dequeued)
			require.Len(t, ends, 1, "ended once, before Run returned")
			assert.Equal(t, err, ends[0])
		})
	}
}

// A task that never runs has its span ended too, without Dequeued: with
// ErrQueueFull when it is rejected, with its ctx's error when its caller
// gives up while it waits, with ErrClosed when Close drops it.
func TestTracerEndsTheSpansOfTasksThatNeverRan(t *testing.T) {
	t.Parallel()
	tracer := &fakeTracer{}
	p := newPool(t, pool.Options{Workers: 1, MaxQueue: 1, Tracer: tracer})
	started := make(chan int, 1)
	release := make(chan struct{})
	holder, err := pool.Submit(context.Background(), p, wait, gate{started: started, release: release})
	require.NoError(t, err)
	<-started

	// Queued, then given up on: Run's own goroutine ends the span.
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() {
		_, err := pool.Run(ctx, p, add, [2]int{1, 2})
		ran <- err
	}()
	require.Eventually(t, func() bool { return p.Stats().Queued == 1 }, 10*time.Second, time.Millisecond)
	_, err = pool.Run(context.Background(), p, add, [2]int{1, 2})
	require.ErrorIs(t, err, pool.ErrQueueFull)
	cancel()
	require.ErrorIs(t, <-ran, context.Canceled)

	// Queued, then dropped by Close.
	queued, err := pool.Submit(context.Background(), p, add, [2]int{3, 4})
	require.NoError(t, err)
	require.NoError(t, p.Close())
	_, err = queued.Wait()
	require.ErrorIs(t, err, pool.ErrClosed)
	close(release)
	_, err = holder.Wait()
	require.ErrorIs(t, err, pool.ErrClosed)

	tracer.mu.Lock()
	spans := append([]*fakeSpan(nil), tracer.spans...)
	tracer.mu.Unlock()
	require.Len(t, spans, 4)
	for i, want := range []error{context.Canceled, pool.ErrQueueFull, pool.ErrClosed} {
		dequeued, ends := spans[i+1].state()
		assert.Zero(t, dequeued, "span %d never ran", i+1)
		require.Len(t, ends, 1, "span %d", i+1)
		assert.ErrorIs(t, ends[0], want, "span %d", i+1)
	}
}

// A task QueueDelay fails in the queue has its span ended, with the error
// its caller got, once the worker that found it overdue lets go of it.
func TestTracerEndsTheSpanOfAnOverdueTask(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		tracer := &fakeTracer{}
		p := newPool(t, pool.Options{Workers: 1, MaxQueue: 10, Tracer: tracer,
			QueueDelay: pool.QueueDelay{Target: 5 * time.Millisecond, Interval: 30 * time.Millisecond}})
		_, free := occupyWorker(t, p)
		f, err := pool.Submit(context.Background(), p, add, [2]int{1, 2})
		require.NoError(t, err)
		time.Sleep(60 * time.Millisecond) // the queue stands for two intervals
		free()
		_, err = f.Wait()
		require.ErrorIs(t, err, pool.ErrQueueFull)
		synctest.Wait() // the worker lets go of it after its lock
		tracer.mu.Lock()
		s := tracer.spans[1]
		tracer.mu.Unlock()
		dequeued, ends := s.state()
		assert.Zero(t, dequeued)
		require.Len(t, ends, 1)
		assert.Equal(t, err, ends[0])
	})
}

// A trace context too large to send fails the submission at once, before
// admission, and ends its span with the error.
func TestTracerTraceContextTooLarge(t *testing.T) {
	t.Parallel()
	tracer := &hugeTracer{}
	p, _ := newProcPool(t, pool.Options{Workers: 1, Tracer: tracer})
	_, err := pool.Run(context.Background(), p, add, [2]int{1, 2})
	require.ErrorIs(t, err, pool.ErrPayloadTooLarge)
	assert.Contains(t, err.Error(), "trace context")
	assert.Equal(t, err, tracer.ended)
	assert.EqualValues(t, 1, p.Stats().Rejected)
}

// hugeTracer injects more baggage than a call carries.
type hugeTracer struct {
	ended error // one task at a time
}

func (t *hugeTracer) StartTask(ctx context.Context, _ pool.TaskInfo) (context.Context, pool.TaskSpan) {
	return ctx, t
}
func (*hugeTracer) Inject(_ context.Context, carrier map[string]string) {
	carrier["baggage"] = string(make([]byte, 16<<10))
}
func (*hugeTracer) Extract(ctx context.Context, _ map[string]string) context.Context { return ctx }
func (*hugeTracer) Dequeued(time.Duration)                                           {}
func (t *hugeTracer) End(err error)                                                  { t.ended = err }

// A Subprocess pool with a Tracer sends the trace context with each call,
// and a worker whose Main has one (TestMain's) gives it to the task; a
// pool without one sends nothing: the caller's ctx values stay behind.
func TestTracerCarriesTheTraceContextToWorkerProcesses(t *testing.T) {
	t.Parallel()
	caller := context.WithValue(testCtx(t), spanKey{}, "caller")

	tracer := &fakeTracer{}
	p, _ := newProcPool(t, pool.Options{Workers: 1, Tracer: tracer})
	seen, err := pool.Run(caller, p, spanSeen, struct{}{})
	require.NoError(t, err)
	s := tracer.only(t)
	assert.Equal(t, s.id, seen, "the task continues its span")
	assert.Equal(t, pool.TaskInfo{Name: "test.spanseen", Isolation: pool.Subprocess}, s.task)
	dequeued, ends := s.state()
	assert.Equal(t, 1, dequeued)
	assert.Equal(t, []error{nil}, ends)

	_, err = pool.Run(caller, p, fail, "no")
	require.ErrorContains(t, err, "no")
	tracer.mu.Lock()
	failedSpan := tracer.spans[1]
	tracer.mu.Unlock()
	_, ends = failedSpan.state()
	assert.Equal(t, []error{err}, ends, "the span ends with the error its caller got")

	untraced, _ := newProcPool(t, pool.Options{Workers: 1})
	seen, err = pool.Run(caller, untraced, spanSeen, struct{}{})
	require.NoError(t, err)
	assert.Empty(t, seen, "without a Tracer nothing is carried")
}

// The span of a running task whose caller gave up covers the run: it ends
// when the task returns, with the error its caller got.
func TestTracerSpanOfAnAbandonedTaskEndsWhenItReturns(t *testing.T) {
	t.Parallel()
	tracer := &fakeTracer{}
	p, err := pool.New(pool.Options{Workers: 1, Tracer: tracer})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	started := make(chan int, 1)
	release := make(chan struct{})
	f, err := pool.Submit(ctx, p, wait, gate{started: started, release: release})
	require.NoError(t, err)
	<-started
	cancel()
	_, err = f.Wait()
	require.ErrorIs(t, err, context.Canceled)
	s := tracer.only(t)
	dequeued, ends := s.state()
	assert.Equal(t, 1, dequeued)
	assert.Empty(t, ends, "the task still runs")

	close(release)
	require.NoError(t, p.Shutdown(testCtx(t))) // its worker has announced the task's end by then
	_, ends = s.state()
	assert.Equal(t, []error{err}, ends)
}

// lockingTracer reads its pool's Stats, which takes the pool's lock, in
// every method: called under that lock, it would deadlock.
type lockingTracer struct {
	fakeTracer
	pool  atomic.Pointer[pool.Pool]
	calls atomic.Int32
}

func (t *lockingTracer) touch() {
	if p := t.pool.Load(); p != nil {
		_ = p.Stats()
		t.calls.Add(1)
	}
}

func (t *lockingTracer) StartTask(ctx context.Context, task pool.TaskInfo) (context.Context, pool.TaskSpan) {
	t.touch()
	ctx, s := t.fakeTracer.StartTask(ctx, task)
	return ctx, lockingSpan{s.(*fakeSpan), t}
}

type lockingSpan struct {
	*fakeSpan
	t *lockingTracer
}

func (s lockingSpan) Dequeued(waited time.Duration) { s.t.touch(); s.fakeSpan.Dequeued(waited) }
func (s lockingSpan) End(err error)                 { s.t.touch(); s.fakeSpan.End(err) }

// No Tracer code runs under the pool's lock, on any of a span's ends: a
// task that ran, a rejection, a caller giving up on a queued task, a
// task QueueDelay finds overdue, a queued task Close drops.
func TestTracerRunsOutsideThePoolsLock(t *testing.T) {
	t.Parallel()
	tracer := &lockingTracer{}
	p, err := pool.New(pool.Options{Workers: 1, MaxQueue: 2, Tracer: tracer,
		QueueDelay: pool.QueueDelay{Target: time.Millisecond, Interval: 10 * time.Millisecond}})
	require.NoError(t, err)
	tracer.pool.Store(p)
	testkit.Within(t, 20*time.Second, "tasks with a Tracer that takes the pool's lock", func() {
		_, err := pool.Run(context.Background(), p, add, [2]int{1, 2})
		require.NoError(t, err)

		started, free := occupyWorker(t, p)
		overdue, err := pool.Submit(context.Background(), p, add, [2]int{1, 2})
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		abandoned, err := pool.Submit(ctx, p, add, [2]int{1, 2})
		require.NoError(t, err)
		_, err = pool.Submit(context.Background(), p, add, [2]int{1, 2})
		require.ErrorIs(t, err, pool.ErrQueueFull)
		cancel()
		_, err = abandoned.Wait()
		require.ErrorIs(t, err, context.Canceled)
		// Over an Interval of standing queue: longer only makes it more
		// overdue.
		time.Sleep(30 * time.Millisecond)
		free()
		_, err = overdue.Wait()
		require.ErrorIs(t, err, pool.ErrQueueFull)

		release := make(chan struct{})
		_, err = pool.Submit(context.Background(), p, wait, gate{started: started, release: release})
		require.NoError(t, err)
		<-started
		dropped, err := pool.Submit(context.Background(), p, add, [2]int{1, 2})
		require.NoError(t, err)
		require.NoError(t, p.Close())
		_, err = dropped.Wait()
		require.ErrorIs(t, err, pool.ErrClosed)
		close(release)
		require.NoError(t, p.Shutdown(context.Background()))
	})
	assert.Positive(t, tracer.calls.Load())
}

// nilSpanTracer starts no spans but carries the trace context.
type nilSpanTracer struct{ fakeTracer }

func (t *nilSpanTracer) StartTask(ctx context.Context, task pool.TaskInfo) (context.Context, pool.TaskSpan) {
	ctx, _ = t.fakeTracer.StartTask(ctx, task)
	return ctx, nil
}

// A Tracer may start no span for a task: the task runs as ever, in
// process and in a worker process, where its trace context still goes.
func TestTracerWithoutSpans(t *testing.T) {
	t.Parallel()
	tracer := &nilSpanTracer{}
	p := newPool(t, pool.Options{Workers: 1, Tracer: tracer})
	seen, err := pool.Run(testCtx(t), p, spanSeen, struct{}{})
	require.NoError(t, err)
	assert.Equal(t, "span-1", seen)
	_, err = pool.Run(testCtx(t), p, fail, "no")
	require.EqualError(t, err, "no")

	q, _ := newProcPool(t, pool.Options{Workers: 1, Tracer: tracer})
	seen, err = pool.Run(testCtx(t), q, spanSeen, struct{}{})
	require.NoError(t, err)
	assert.Equal(t, "span-3", seen)
}
