// Package ctxattack runs the attack of a caller's faulty ctx against a
// pool, for the tests of every isolation: each of a ctx's methods (Done,
// Err, Deadline, Value) panics, or blocks, from its 1st to its 6th call,
// through Run, Submit, SubmitBlocking and SubmitAll, on ctxs that end
// while the task runs and ones that don't. Whatever the fault, it may
// fail its own call or panic on the caller's goroutine; never the process,
// and never the pool. Its tasks are registered at package level, so that
// worker processes and nodes made of a test binary that imports it have
// them. For tests only.
package ctxattack

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/offloadgo/offload/internal/testkit"
	"github.com/offloadgo/offload/pool"
)

var (
	// inc returns its input plus one.
	inc = pool.Register("ctxattack.inc", func(_ context.Context, n int) (int, error) {
		return n + 1, nil
	})
	// outlive waits for its ctx to end, at most d, and returns its
	// cause: it outlives the caller's ctx of a short timeout.
	outlive = pool.Register("ctxattack.outlive", func(ctx context.Context, d time.Duration) (int, error) {
		select {
		case <-ctx.Done():
			return 0, context.Cause(ctx)
		case <-time.After(d):
			return 1, nil
		}
	})
)

// bound is how long anything here may take before it counts as a hang:
// generous, for a busy machine and -race.
const bound = 30 * time.Second

// Scenarios are the ctxs the faults are wrapped around, by name: one
// that ends after the call (the task returns at once), one that ends
// while the task waits for it, one that carries values only, one with a
// deadline far off, and one of a type not package context's that ends
// while the task waits for it.
var scenarios = []string{"returns", "ends", "values", "deadline", "foreign"}

// outlives says whether a scenario's ctx ends while its task waits.
func outlives(scenario string) bool { return scenario == "ends" || scenario == "foreign" }

// base returns the ctx of a scenario and its cancel.
func base(scenario string) (context.Context, context.CancelFunc) {
	type key struct{}
	switch scenario {
	case "ends":
		return context.WithTimeout(context.Background(), time.Millisecond)
	case "values":
		return context.WithValue(context.Background(), key{}, 1), func() {}
	case "deadline":
		return context.WithTimeout(context.Background(), time.Hour)
	case "foreign":
		ctx := &foreignCtx{done: make(chan struct{})}
		end := time.AfterFunc(time.Millisecond, func() { close(ctx.done) })
		return ctx, func() {
			if end.Stop() {
				close(ctx.done)
			}
		}
	}
	return context.WithCancel(context.Background())
}

// foreignCtx is a ctx of a type not package context's, which ends when
// its channel closes: package context can follow its end only from a
// goroutine of its own.
type foreignCtx struct{ done chan struct{} }

func (*foreignCtx) Deadline() (time.Time, bool) { return time.Time{}, false }
func (c *foreignCtx) Done() <-chan struct{}     { return c.done }
func (*foreignCtx) Value(any) any               { return nil }

func (c *foreignCtx) Err() error {
	select {
	case <-c.done:
		return context.Canceled
	default:
		return nil
	}
}

// apis submit one task (SubmitAll three) to p under ctx, in each way a
// caller can, and wait for the outcome: the task's error, or nil.
var apis = []struct {
	name   string
	submit func(ctx context.Context, p *pool.Pool, outliving bool) error
}{
	{"Run", func(ctx context.Context, p *pool.Pool, outliving bool) error {
		if outliving {
			_, err := pool.Run(ctx, p, outlive, bound)
			return err
		}
		_, err := pool.Run(ctx, p, inc, 1)
		return err
	}},
	{"Submit", func(ctx context.Context, p *pool.Pool, outliving bool) error {
		var f *pool.Future[int]
		var err error
		if outliving {
			f, err = pool.Submit(ctx, p, outlive, bound)
		} else {
			f, err = pool.Submit(ctx, p, inc, 1)
		}
		if err != nil {
			return err
		}
		_, err = f.Wait()
		return err
	}},
	{"SubmitBlocking", func(ctx context.Context, p *pool.Pool, outliving bool) error {
		var f *pool.Future[int]
		var err error
		if outliving {
			f, err = pool.SubmitBlocking(ctx, p, outlive, bound)
		} else {
			f, err = pool.SubmitBlocking(ctx, p, inc, 1)
		}
		if err != nil {
			return err
		}
		_, err = f.Wait()
		return err
	}},
	{"SubmitAll", func(ctx context.Context, p *pool.Pool, outliving bool) error {
		var fs []*pool.Future[int]
		var err error
		if outliving {
			fs, err = pool.SubmitAll(ctx, p, outlive, []time.Duration{bound, bound, bound})
		} else {
			fs, err = pool.SubmitAll(ctx, p, inc, []int{1, 2, 3})
		}
		for _, f := range fs {
			if _, ferr := f.Wait(); err == nil {
				err = ferr
			}
		}
		return err
	}},
}

// Attack runs every fault against p, one subtest each (named
// METHOD-panics|blocks-from-call-N/SCENARIO/API), and then shuts p down:
// each call resolves, panics on its caller's goroutine, or blocks its
// caller alone; p serves a plain call after each, and Shutdown returns.
// p should have one worker, so that a worker a fault wedged shows.
func Attack(t *testing.T, p *pool.Pool) {
	for _, method := range testkit.Methods {
		for from := 1; from <= 6; from++ {
			for _, block := range []bool{false, true} {
				name := testkit.FaultName(method, from, block)
				for _, scenario := range scenarios {
					for _, api := range apis {
						t.Run(name+"/"+scenario+"/"+api.name, func(t *testing.T) {
							ctx, cancel := base(scenario)
							defer cancel()
							bad := testkit.NewFaultCtx(ctx, method, from, block)
							defer bad.Release()
							ended := make(chan struct{})
							go func() {
								defer close(ended)
								defer func() { _ = recover() }() // the caller's own panic: fine
								_ = api.submit(bad, p, outlives(scenario))
							}()
							select {
							case <-ended:
							case <-bad.Blocked():
								// Only the caller may be stuck in its ctx: the
								// pool serves others meanwhile.
								Serves(t, p)
								bad.Release()
							case <-time.After(bound):
								t.Fatalf("the call neither ended nor blocked in its ctx within %v", bound)
							}
							testkit.Within(t, bound, "the faulty call, its ctx released", func() { <-ended })
							Serves(t, p)
						})
					}
				}
			}
		}
	}
	testkit.Within(t, bound, "Shutdown after the attack", func() {
		ctx, cancel := context.WithTimeout(context.Background(), bound)
		defer cancel()
		assert.NoError(t, p.Shutdown(ctx))
	})
	st := p.Stats()
	assert.Zero(t, st.Busy, "%+v", st)
	assert.Zero(t, st.Queued, "%+v", st)
}

// Serves checks that p runs a plain call, within the bound.
func Serves(t *testing.T, p *pool.Pool) {
	t.Helper()
	testkit.Within(t, bound, "a plain Run", func() {
		out, err := pool.Run(context.Background(), p, inc, 41)
		if assert.NoError(t, err) {
			assert.Equal(t, 42, out)
		}
	})
}
