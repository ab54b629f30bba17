package natsremote

import (
	"sync/atomic"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/internal/blobjson"
	"github.com/offloadgo/offload/internal/seam"
	"github.com/offloadgo/offload/pool"
)

// A node older than kindProgramCall ignores such a call, and its next pong
// names the call missing: the call fails with ErrNodeLost, sent once and
// run nowhere. That is why the new call kind keeps the protocol version
// (see wire.go).
func TestProgramCallToAnOlderNodeIsLost(t *testing.T) {
	t.Parallel()
	nc := conn(t)
	var programCalls atomic.Int32
	sent := make(chan []byte, 1)
	older := fakeNode(t, nc, "older-node", "older", 1, func(m *nats.Msg, h header) {
		if h.kind == kindProgramCall {
			programCalls.Add(1) // an older node knows no such kind: no answer
			_, body, _ := parseHeader(m.Data)
			select {
			case sent <- body:
			default: // a second call: counted, and failed below
			}
		}
	})
	older.forget.Store(true)
	s, _ := bind(t, nc, "older-node")
	waitKnown(t, s, 1)

	payload, err := s.Encode("nri.double", nil, 21, seam.JSON)
	require.NoError(t, err)
	var out int
	m := &seam.Call{Task: "nri.double", Payload: payload, Out: &out, JSON: true, Handover: &seam.Handover{}}
	err = s.NewRunner(1).Exchange(testContext(t), m)
	require.ErrorIs(t, err, pool.ErrNodeLost)
	assert.EqualValues(t, 1, programCalls.Load(), "sent once, never again")

	head, input, err := parseCallHead(<-sent)
	require.NoError(t, err)
	assert.Equal(t, "nri.double", head.task)
	assert.Zero(t, head.fingerprint, "no Go types to fingerprint")
	v, err := parseProgramValue(input)
	require.NoError(t, err)
	assert.Equal(t, blobjson.Raw{JSON: []byte("21"), Blob: []byte{}}, v, "the input as JSON")
}
