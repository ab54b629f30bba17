package subproc

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/offloadgo/offload/internal/outcome"
)

// Each outcome a worker process reports keeps its byte on the wire: a
// change is a new protocol version (workerproc.ProtocolVersion).
func TestAnswerKindBytes(t *testing.T) {
	want := map[outcome.Kind]byte{
		outcome.Result:    3,
		outcome.Error:     4,
		outcome.Panic:     5,
		outcome.TooLarge:  6,
		outcome.Unknown:   7,
		outcome.Goexit:    8,
		outcome.Permanent: 9,
	}
	assert.Len(t, answerKinds, len(want))
	for k, b := range want {
		assert.Equal(t, b, answerKind(k), "%v", k)
		assert.Equal(t, k, outcomeOf(b), "byte %d", b)
	}
	for _, k := range []outcome.Kind{outcome.Crashed, outcome.NotStarted, outcome.Ended, outcome.Lost, outcome.Raised} {
		assert.Equal(t, kindError, answerKind(k), "%v is no worker's answer: it goes as an error", k)
	}
	for _, b := range []byte{0, kindCall, kindCancel, kindPermanent + 1, kindMoves | kindResult} {
		assert.Zero(t, outcomeOf(b), "byte %d names no outcome", b)
	}
}
