package subproc

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/internal/outcome"
	"github.com/offloadgo/offload/internal/seam"
	"github.com/offloadgo/offload/internal/workerproc"
)

// proc.internal.cause waits for its ctx and returns the cause it was
// cancelled with, which names the cancel frame that reached it.
var _ = register("proc.internal.cause", func(ctx context.Context, _ struct{}) (string, error) {
	<-ctx.Done()
	return context.Cause(ctx).Error(), nil
})

// A cancel reaches only the call its frame ID names: one that comes after
// its call's reply (the pool sent it as the reply crossed it), twice, or
// for an ID never used is ignored, and never cancels the call that runs
// next. Each cancel here carries a different cause, so the reply says
// which frame cancelled its call.
func TestServeLateCancelTouchesOnlyItsCall(t *testing.T) {
	t.Parallel()
	parent, code := startServe(t)
	defer parent.Close()
	_, err := parent.ReadFrame() // the hello
	require.NoError(t, err)
	call := func(id uint64) {
		t.Helper()
		writeCall(t, parent, id, "proc.internal.cause", nil)
	}
	cancelWith := func(id uint64, cause byte) {
		t.Helper()
		require.NoError(t, parent.WriteFrame(workerproc.Frame{Kind: kindCancel, ID: id, Body: []byte{cause}}))
	}
	expect := func(id uint64, cause string) {
		t.Helper()
		assert.Equal(t, cause, replyString(t, readReply(t, parent, id)))
	}

	call(1)
	cancelWith(1, byte(outcome.Canceled))
	expect(1, context.Canceled.Error())
	// The reply to 1 is in; its cancel comes again, late, and one for an
	// ID not yet used, before call 2 and while it runs.
	cancelWith(1, byte(outcome.Closed))
	cancelWith(2, byte(outcome.Closed))
	call(2)
	cancelWith(1, byte(outcome.Closed))
	cancelWith(3, byte(outcome.Closed))
	cancelWith(2, byte(outcome.Deadline))
	expect(2, context.DeadlineExceeded.Error())

	parent.Close()
	assert.Equal(t, 0, <-code)
}

// A cancel frame's body is one byte naming the cause; any other body
// (empty, longer, an unknown code: a corrupt or future frame) is a plain
// cancel, never a failure.
func TestCancelFrameCauses(t *testing.T) {
	t.Parallel()
	deadline, stop := context.WithTimeout(context.Background(), 0)
	defer stop()
	<-deadline.Done()
	closed, end := context.WithCancelCause(context.Background())
	end(seam.ErrClosed)
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		ctx  context.Context
		want error
	}{{deadline, context.DeadlineExceeded}, {closed, seam.ErrClosed}, {canceled, context.Canceled}} {
		f := cancelFrame(7, tc.ctx)
		assert.Equal(t, kindCancel, f.Kind)
		assert.EqualValues(t, 7, f.ID)
		assert.Equal(t, tc.want, cancelCause(f.Body))
	}
	for _, body := range [][]byte{nil, {}, {byte(outcome.Deadline), 0}, {0x7f}, {0xff, 0xff}} {
		assert.Equal(t, context.Canceled, cancelCause(body), "%x", body)
	}
}

func FuzzCancelCause(f *testing.F) {
	f.Add([]byte{byte(outcome.Deadline)})
	f.Add([]byte{})
	f.Add([]byte{byte(outcome.Closed), byte(outcome.Closed)})
	f.Fuzz(func(t *testing.T, body []byte) {
		switch cause := cancelCause(body); cause {
		case context.Canceled, context.DeadlineExceeded, seam.ErrClosed:
		default:
			t.Fatalf("cancelCause(%x) = %v, not one of the three causes", body, cause)
		}
	})
}
