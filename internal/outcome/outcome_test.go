package outcome

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/internal/seam"
)

func TestKindNamesAreDistinct(t *testing.T) {
	seen := map[string]Kind{}
	for _, k := range Kinds() {
		require.True(t, k.Valid())
		name := k.String()
		require.NotContains(t, name, "kind(", "kind %d has no name", k)
		require.NotContains(t, seen, name, "%v and %v share a name", k, seen[name])
		seen[name] = k
	}
	assert.False(t, Kind(0).Valid())
	assert.Equal(t, "kind(0)", Kind(0).String())
	assert.Equal(t, fmt.Sprintf("kind(%d)", numKinds), numKinds.String())
}

// Every Kind but Result is an error that names its sentinel, with the
// account after it; on a node, the node is named too.
func TestErrOfEachKind(t *testing.T) {
	canceled := func(byte) error { return nil }
	cases := []struct {
		kind     Kind
		sentinel error
		local    string // the error's text off a node
		remote   string // on node n1
	}{
		{Goexit, seam.ErrGoexit,
			`pool: task called runtime.Goexit: task "t" did not return (t.FailNow or the like on its goroutine)`,
			`pool: task called runtime.Goexit: task "t" did not return on node n1 (t.FailNow or the like on its goroutine)`},
		{TooLarge, seam.ErrPayloadTooLarge, "pool: payload too large: why", "pool: payload too large: on node n1: why"},
		{Unknown, seam.ErrUnknownTask, "pool: unknown task: why", "pool: unknown task: on node n1: why"},
		{Crashed, seam.ErrWorkerCrashed, "pool: worker crashed: why", "pool: worker crashed: on node n1: why"},
		{NotStarted, seam.ErrWorkerStartFailed, "pool: worker did not start: why", "pool: worker did not start: on node n1: why"},
		{Lost, seam.ErrNodeLost, "pool: worker node lost: why", "pool: worker node lost: node n1: why"},
	}
	for _, c := range cases {
		t.Run(c.kind.String(), func(t *testing.T) {
			err := Of(c.kind, []byte("why")).Err(Where{Task: "t"})
			require.ErrorIs(t, err, c.sentinel)
			assert.EqualError(t, err, c.local)
			err = Of(c.kind, []byte("why")).Err(Where{Task: "t", Node: "n1", Cause: canceled})
			require.ErrorIs(t, err, c.sentinel)
			assert.EqualError(t, err, c.remote)
		})
	}
	assert.NoError(t, Of(Result, []byte{1}).Err(Where{Task: "t"}))
	var te *seam.TaskError
	require.ErrorAs(t, Of(Error, []byte("boom")).Err(Where{}), &te)
	assert.Equal(t, "boom", te.Message)
	var p *seam.Panic
	require.ErrorAs(t, Panicked("oops", []byte("stack")).Err(Where{}), &p)
	assert.Equal(t, "oops", p.Value)
	assert.Equal(t, []byte("stack"), p.Stack)
	assert.EqualError(t, Of(0, nil).Err(Where{Task: "t"}), `pool: task "t" ended in an outcome of kind(0)`)
}

// An Ended names its cause as the transport reads the code; an unknown
// code, a body of another length or no reading is context.Canceled.
func TestEndedCause(t *testing.T) {
	byCode := func(code byte) error {
		if code == 1 {
			return context.DeadlineExceeded
		}
		return nil
	}
	err := Of(Ended, []byte{1}).Err(Where{Cause: byCode})
	assert.ErrorIs(t, err, seam.ErrTerminated)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	for _, o := range []Outcome{Of(Ended, []byte{2}), Of(Ended, nil), Of(Ended, []byte{1, 1})} {
		err := o.Err(Where{Cause: byCode})
		assert.ErrorIs(t, err, seam.ErrTerminated)
		assert.ErrorIs(t, err, context.Canceled)
	}
	assert.ErrorIs(t, Of(Ended, []byte{1}).Err(Where{}), context.Canceled)
}

// OfError reads a pool's error back into the Outcome whose Err made it:
// the sentinel's Kind, with the account alone.
func TestOfErrorInvertsErr(t *testing.T) {
	for _, k := range []Kind{TooLarge, Crashed, NotStarted} {
		err := Of(k, []byte("why")).Err(Where{Task: "t"})
		assert.Equal(t, Of(k, []byte("why")), OfError(err), "%v", k)
		assert.Equal(t, Of(k, []byte("why")), OfError(fmt.Errorf("%w", err)), "%v wrapped", k)
	}
	assert.Equal(t, Outcome{Kind: Goexit}, OfError(Of(Goexit, nil).Err(Where{Task: "t"})))
	assert.Equal(t, Outcome{Kind: Lost}, OfError(fmt.Errorf("%w: under the task", seam.ErrClosed)))
	assert.Equal(t, Of(Crashed, []byte("pool: worker node lost: node n1: gone")), OfError(fmt.Errorf("%w: node n1: gone", seam.ErrNodeLost)),
		"a lost node is a crash seen from afar, its own words kept")
	assert.Equal(t, Of(Error, []byte("plain")), OfError(errors.New("plain")))
	assert.Equal(t, Of(Error, []byte("pool: unknown task: x")), OfError(fmt.Errorf("%w: x", seam.ErrUnknownTask)))
}

// An exception from a program of another language reaches the caller
// with its type, message and traceback.
func TestRaised(t *testing.T) {
	err := Raise("ValueError", "bad width 7", "Traceback ...\n").Err(Where{Task: "t"})
	var te *seam.TaskError
	require.ErrorAs(t, err, &te)
	assert.Equal(t, seam.TaskError{Message: "bad width 7", Type: "ValueError", Traceback: "Traceback ...\n"}, *te)
	assert.EqualError(t, err, "ValueError: bad width 7")

	require.ErrorAs(t, Raise("", "m", "").Err(Where{}), &te)
	assert.Equal(t, "Error", te.Type, "an exception of no type")
	require.ErrorAs(t, Of(Raised, []byte("{")).Err(Where{}), &te)
	assert.Contains(t, te.Message, "corrupt")
}

// Causes are wire bytes (and words, for a program) of every transport.
func TestCauseBytes(t *testing.T) {
	assert.Equal(t, []byte{0, 1, 2, 3}, []byte{byte(Canceled), byte(Deadline), byte(Closed), byte(NumCauses)})
	for _, c := range []struct {
		cause error
		want  Cause
		word  string
	}{
		{context.Canceled, Canceled, "canceled"},
		{errors.New("a cause of the caller's own"), Canceled, "canceled"},
		{context.DeadlineExceeded, Deadline, "deadline"},
		{fmt.Errorf("wrapped: %w", seam.ErrClosed), Closed, "closed"},
	} {
		got := CauseOf(c.cause)
		assert.Equal(t, c.want, got, "%v", c.cause)
		assert.Equal(t, c.word, got.String())
	}
	assert.Equal(t, context.DeadlineExceeded, Deadline.Err())
	assert.Equal(t, seam.ErrClosed, Closed.Err())
	assert.Equal(t, context.Canceled, Canceled.Err())
	assert.Equal(t, context.Canceled, NumCauses.Err(), "a code of no Cause")
}

type markedErr struct{ permanent bool }

func (e markedErr) Error() string   { return "marked" }
func (e markedErr) Permanent() bool { return e.permanent }

// An error marked permanent by its method stays so across a process or a
// network; one whose method says false, or that has none, is an Error.
func TestFailedPermanent(t *testing.T) {
	o := Failed(fmt.Errorf("wrapped: %w", markedErr{true}))
	assert.Equal(t, Permanent, o.Kind)
	assert.Equal(t, "wrapped: marked", string(o.Body))
	var te *seam.TaskError
	require.ErrorAs(t, o.Err(Where{}), &te)
	assert.True(t, te.Permanent)
	assert.Equal(t, "wrapped: marked", te.Message)

	assert.Equal(t, Error, Failed(markedErr{false}).Kind)
	assert.Equal(t, Error, Failed(errors.New("plain")).Kind)
	assert.Equal(t, Permanent, OfError(markedErr{true}).Kind)
	assert.Equal(t, TooLarge, OfError(fmt.Errorf("%w: and %w", seam.ErrPayloadTooLarge, markedErr{true})).Kind, "a sentinel first")
}
