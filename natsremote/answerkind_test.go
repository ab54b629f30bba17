package natsremote

import (
	"sync/atomic"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/pool"
)

// An answer of a kind the submitter does not know — what a submitter
// older than kindNotStarted makes of that kind — fails its call with an
// error, and the call goes to no other node: a node newer than its
// submitter costs it that call, never a second run. That is why adding
// an answer kind keeps the protocol version (see wire.go).
func TestAnswerOfUnknownKindIsNotSentElsewhere(t *testing.T) {
	t.Parallel()
	nc := conn(t)
	var newerCalls, otherCalls atomic.Int32
	var newer, other *fake
	// newer has more free slots, so the call goes there first.
	newer = fakeNode(t, nc, "newer-kind", "newer", 4, func(m *nats.Msg, h header) {
		if h.kind == kindCall {
			newerCalls.Add(1)
			newer.answer(m, h, kindPermanent+1, []byte("a kind from the future"))
		}
	})
	other = fakeNode(t, nc, "newer-kind", "other", 1, func(m *nats.Msg, h header) {
		if h.kind == kindCall {
			otherCalls.Add(1)
			other.answer(m, h, kindResult, []byte{0x02})
		}
	})
	s, _ := bind(t, nc, "newer-kind")
	waitKnown(t, s, 2)
	_, err := exchange(testContext(t), s, "nri.double", 1)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "natsremote: node newer-fake sent an answer of unknown kind")
	for _, sentinel := range []error{pool.ErrWorkerStartFailed, pool.ErrWorkerCrashed, pool.ErrQueueFull, pool.ErrUnknownTask} {
		assert.NotErrorIs(t, err, sentinel)
	}
	assert.EqualValues(t, 1, newerCalls.Load())
	assert.Zero(t, otherCalls.Load(), "the call is not sent again")
}
