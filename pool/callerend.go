package pool

import (
	"context"
	"reflect"
	"time"
)

// callerEnd is what the pool keeps of a caller's ctx: its Done channel and
// its deadline, read once, on the caller's goroutine, as the call is
// submitted. From then on the pool works from these alone and never calls
// the ctx's methods again: a ctx whose methods panic or block does so to
// its caller, never to a worker, a transport, or the goroutines that
// package context starts for a ctx of a type not its own (WithCancel and
// AfterFunc on one call its Done and Err from a goroutine of their own).
type callerEnd struct {
	done     <-chan struct{} // nil: the ctx never ends
	deadline time.Time       // zero: none
	// std is package context's own cancellable ctx whose Done channel is
	// done (the caller's ctx itself, or one it wraps), for watch to follow
	// with AfterFunc, without a goroutine and without the caller's code;
	// nil if there is none, or nobody watches. It holds the caller's ctx
	// alive, and watch lets go of it.
	std context.Context
}

// readEnd reads ctx's end, calling its Done and Deadline once each and,
// for a call that will be watched, its Value once; it returns ctx's error
// if ctx has ended already. A panic in ctx's methods is its caller's, as
// in any function it calls: nothing has been set up yet.
func readEnd(ctx context.Context, watched bool) (callerEnd, error) {
	e := callerEnd{done: ctx.Done()}
	e.deadline, _ = ctx.Deadline()
	if e.done == nil {
		return e, nil
	}
	if e.ended() {
		return e, e.err()
	}
	if watched && cancelCtxKey != nil {
		std, _ := ctx.Value(cancelCtxKey).(context.Context)
		if std != nil && reflect.TypeOf(std) == cancelCtxType && std.Done() == e.done {
			e.std = std
		}
	}
	return e, nil
}

// ended reports whether the caller's ctx has ended, without blocking.
func (e *callerEnd) ended() bool {
	select {
	case <-e.done:
		return true
	default:
		return false // a nil done never ends
	}
}

// err is the error of a call whose caller's ctx has ended: what its Err
// reports by Context's contract, told without calling it —
// context.DeadlineExceeded once its deadline has passed, context.Canceled
// otherwise.
func (e *callerEnd) err() error {
	if e.pastDeadline() {
		return context.DeadlineExceeded
	}
	return context.Canceled
}

// pastDeadline reports whether the caller's deadline, if any, has passed.
func (e *callerEnd) pastDeadline() bool {
	return !e.deadline.IsZero() && !time.Now().Before(e.deadline)
}

// afterEnd runs f on a goroutine of the pool's own once done closes,
// unless until closes first: AfterFunc for a caller's ctx not of package
// context's making, watched through its channel alone. until is the task's
// context, which every end of a call cancels, so the goroutine never
// outlives the call.
func afterEnd(done, until <-chan struct{}, f func()) {
	go func() {
		select {
		case <-done:
			f()
		case <-until:
		}
	}()
}

// cancelCtxKey is the key under which package context's cancellable
// contexts answer Value with themselves (context.Cause looks them up by
// it), and cancelCtxType their type: found once, by asking a probe, so
// that readEnd can tell a caller's ctx that ends with one of them. If the
// probe finds nothing, every watched ctx is watched by afterEnd.
var cancelCtxKey, cancelCtxType = probeCancelCtx()

func probeCancelCtx() (any, reflect.Type) {
	var probe keyProbe
	_ = context.Cause(&probe) // an ended ctx is asked for its cancelCtx by key
	if probe.key == nil {
		return nil, nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if v, _ := ctx.Value(probe.key).(context.Context); v != ctx {
		return nil, nil
	}
	return probe.key, reflect.TypeOf(ctx)
}

// keyProbe is an ended ctx that records the key it is asked for.
type keyProbe struct {
	context.Context // nil: only Err and Value are called
	key             any
}

func (*keyProbe) Err() error          { return context.Canceled }
func (p *keyProbe) Value(key any) any { p.key = key; return nil }

// taskParent is the parent of a task's context: the caller's values and
// deadline, as read at submission, and no end of its own (the pool ends
// the task's context itself, from the caller's Done channel). Deriving
// from it calls none of the caller's methods; the task's context calls the
// caller's Value alone, when the task asks for a value, on the task's own
// goroutine (a panic there is the task's, a *PanicError).
type taskParent struct {
	values   context.Context // the caller's ctx; nil for a task run elsewhere
	deadline time.Time
}

func (t *taskParent) Deadline() (time.Time, bool) { return t.deadline, !t.deadline.IsZero() }
func (*taskParent) Done() <-chan struct{}         { return nil }
func (*taskParent) Err() error                    { return nil }

func (t *taskParent) Value(key any) any {
	if t.values == nil {
		return nil
	}
	return t.values.Value(key)
}

// stoppedTask is a task's context when the caller's ctx never ends: the
// caller's values and deadline, and the end of the pool's stop context
// (Close), with its cause (ErrClosed) for context.Cause, which finds the
// cancelCtx to ask through Value.
type stoppedTask struct {
	taskParent
	stop context.Context
}

func (t *stoppedTask) Done() <-chan struct{} { return t.stop.Done() }
func (t *stoppedTask) Err() error            { return t.stop.Err() }

func (t *stoppedTask) Value(key any) any {
	if key == cancelCtxKey {
		return t.stop.Value(key)
	}
	if v := t.taskParent.Value(key); v != nil {
		return v
	}
	return t.stop.Value(key) // the probe found no key: Cause asks by one unknown here
}
