package natsremote

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/offloadgo/offload/internal/outcome"
)

// Each outcome keeps its answer kind on the wire, and the answers that
// name no outcome keep theirs: a change is a new protocolVersion.
func TestAnswerKindBytes(t *testing.T) {
	want := map[outcome.Kind]byte{
		outcome.Unknown:    17,
		outcome.Result:     18,
		outcome.Error:      19,
		outcome.Panic:      20,
		outcome.Goexit:     21,
		outcome.TooLarge:   22,
		outcome.Crashed:    23,
		outcome.Ended:      24,
		outcome.Lost:       25,
		outcome.NotStarted: 28,
		outcome.Raised:     29,
		outcome.Permanent:  30,
	}
	assert.Len(t, want, len(outcome.Kinds()), "every outcome crosses a node's wire")
	for k, b := range want {
		assert.Equal(t, b, answerKind(k), "%v", k)
		assert.Equal(t, k, outcomeOf(b), "kind %d", b)
	}
	assert.Equal(t, []byte{16, 26, 27}, []byte{kindFull, kindPong, kindLate})
	for _, b := range []byte{0, kindCall, kindCancel, kindPing, kindFull, kindPong, kindLate, kindPermanent + 1, kindAdvert} {
		assert.Zero(t, outcomeOf(b), "kind %d names no outcome", b)
	}
	assert.Equal(t, []byte{1, 2, 3, 4}, []byte{kindCall, kindCancel, kindPing, kindProgramCall})
	assert.Equal(t, kindError, answerKind(0), "no outcome goes as an error")
	assert.EqualValues(t, 2, protoVersion)
}
