package outcome

import (
	"context"
	"fmt"

	"github.com/offloadgo/offload/cancel"
	"github.com/offloadgo/offload/internal/codec"
	"github.com/offloadgo/offload/internal/seam"
)

// Where is the call an Outcome ends, as its error tells it.
type Where struct {
	// Task is the task's name.
	Task string
	// Node is the node that ran the call; "" for a worker process of the
	// caller's own pool.
	Node string
	// Cause is what an Ended's cause code means on the transport; nil
	// (or a nil error) reads every code as context.Canceled.
	Cause func(code byte) error
}

// Err is the error the caller gets for o: nil for a Result (whose body
// the transport decodes into the output), the sentinel of o's Kind with
// the account after it, a *seam.TaskError or a *seam.Panic for package
// pool to make public. An Outcome of no Kind is an error too, though its
// transport says what it did not know first.
func (o Outcome) Err(w Where) error {
	switch o.Kind {
	case Result:
		return nil
	case Error:
		return &seam.TaskError{Message: string(o.Body)}
	case Panic:
		value, stack := codec.DecodePanic(o.Body)
		return &seam.Panic{Value: value, Stack: stack}
	case Goexit:
		return fmt.Errorf("%w: task %q did not return%s (t.FailNow or the like on its goroutine)", seam.ErrGoexit, w.Task, w.node(" on node %s"))
	case TooLarge:
		return fmt.Errorf("%w: %s%s", seam.ErrPayloadTooLarge, w.node("on node %s: "), o.Body)
	case Unknown:
		return fmt.Errorf("%w: %s%s", seam.ErrUnknownTask, w.node("on node %s: "), o.Body)
	case Crashed:
		return fmt.Errorf("%w: %s%s", seam.ErrWorkerCrashed, w.node("on node %s: "), o.Body)
	case NotStarted:
		return fmt.Errorf("%w: %s%s", seam.ErrWorkerStartFailed, w.node("on node %s: "), o.Body)
	case Ended:
		return cancel.WithCause(seam.ErrTerminated, w.cause(o.Body))
	case Lost:
		return fmt.Errorf("%w: %s%s", seam.ErrNodeLost, w.node("node %s: "), o.Body)
	case Raised:
		return raised(o.Body)
	case Permanent:
		return &seam.TaskError{Message: string(o.Body), Permanent: true}
	}
	return fmt.Errorf("pool: task %q ended in an outcome of %v", w.Task, o.Kind)
}

// node says which node ran the call, in format; "" off a node.
func (w Where) node(format string) string {
	if w.Node == "" {
		return ""
	}
	return fmt.Sprintf(format, w.Node)
}

// cause is the cause an Ended's body names.
func (w Where) cause(body []byte) error {
	if w.Cause != nil && len(body) == 1 {
		if err := w.Cause(body[0]); err != nil {
			return err
		}
	}
	return context.Canceled
}
