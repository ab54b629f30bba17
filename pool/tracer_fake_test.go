package pool_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/pool"
)

// spanKey holds, in a ctx, the ID of the span it is in (a fakeTracer's).
type spanKey struct{}

// fakeTracer records the spans it starts; its trace context is the span's
// ID, carried as "test-span". It is the worker processes' too (TestMain),
// where only Extract is called.
type fakeTracer struct {
	mu    sync.Mutex
	spans []*fakeSpan
}

type fakeSpan struct {
	id, parent string // the span's ID, and the one the caller's ctx had
	task       pool.TaskInfo

	mu       sync.Mutex
	dequeued []time.Duration
	ends     []error
}

func (t *fakeTracer) StartTask(ctx context.Context, task pool.TaskInfo) (context.Context, pool.TaskSpan) {
	parent, _ := ctx.Value(spanKey{}).(string) // not under t.mu: the caller's ctx may block
	t.mu.Lock()
	defer t.mu.Unlock()
	s := &fakeSpan{id: fmt.Sprintf("span-%d", len(t.spans)+1), task: task, parent: parent}
	t.spans = append(t.spans, s)
	return context.WithValue(ctx, spanKey{}, s.id), s
}

func (*fakeTracer) Inject(ctx context.Context, carrier map[string]string) {
	if id, ok := ctx.Value(spanKey{}).(string); ok {
		carrier["test-span"] = id
	}
}

func (*fakeTracer) Extract(ctx context.Context, carrier map[string]string) context.Context {
	if id, ok := carrier["test-span"]; ok {
		return context.WithValue(ctx, spanKey{}, id)
	}
	return ctx
}

func (s *fakeSpan) Dequeued(waited time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dequeued = append(s.dequeued, waited)
}

func (s *fakeSpan) End(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ends = append(s.ends, err)
}

// only returns the one span t started.
func (t *fakeTracer) only(tb testing.TB) *fakeSpan {
	tb.Helper()
	t.mu.Lock()
	defer t.mu.Unlock()
	require.Len(tb, t.spans, 1)
	return t.spans[0]
}

// state returns how often s was dequeued and its ends so far.
func (s *fakeSpan) state() (dequeued int, ends []error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.dequeued), append([]error(nil), s.ends...)
}
