package natsremote

import (
	"bytes"
	"context"
	"runtime/debug"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/internal/registry"
	"github.com/offloadgo/offload/internal/seam"
	"github.com/offloadgo/offload/pool"
)

// Messages nested deeper than a receiver decodes (100 arrays and maps
// within each other), from a participant with credentials: a node's
// answer, a submitter's call. The NATS server and the node run in the
// test's process, so the test's stack limit holds for both.

var _ = pool.Register("nri.any-in", func(_ context.Context, in any) (int, error) { return 1, nil })

// deepArrays is n one-element arrays within each other around the int
// 1: 0x91 0x91 ... 0x01, n+1 bytes.
func deepArrays(n int) []byte {
	return append(bytes.Repeat([]byte{0x91}, n), 1)
}

// limitStack makes a recursion through a deep message fatal (stack
// overflow) at 16 MB rather than at 1 GB, for the rest of the test. Not
// for parallel tests: the limit is the process's.
func limitStack(t *testing.T) {
	old := debug.SetMaxStack(16 << 20)
	t.Cleanup(func() { debug.SetMaxStack(old) })
}

// A node's answer of a million nested arrays fails its call with an
// error, whether the output goes through the copying Peer (an Out of type
// any) or not, and the submitter goes on.
func TestDeepAnswerFailsItsCall(t *testing.T) {
	limitStack(t)
	nc := conn(t)
	deep := deepArrays(1_000_000)
	var f *fake
	f = fakeNode(t, nc, "deep-answer", "fake", 4, func(m *nats.Msg, h header) {
		if h.kind == kindCall {
			f.answer(m, h, kindResult, deep)
		}
	})
	s, _ := bind(t, nc, "deep-answer")
	waitKnown(t, s, 1)
	for _, moves := range []bool{true, false} {
		payload, err := s.Encode("nri.double", nil, 1, seam.Msgpack)
		require.NoError(t, err)
		var out any
		m := &seam.Call{Task: "nri.double", Payload: payload, Out: &out, OutMoves: moves, Handover: &seam.Handover{}}
		err = s.NewRunner(1).Exchange(context.Background(), m)
		require.ErrorContains(t, err, `pool: decode output of task "nri.double"`)
		require.ErrorContains(t, err, "nested more than 100 deep")
	}
}

// A raw call whose input is a million nested arrays, from anyone who may
// publish on the node's subject, fails with an error the node answers,
// at once, into any input type; the node goes on serving.
func TestNodeRefusesDeepInput(t *testing.T) {
	limitStack(t)
	nc := conn(t)
	a := serveNode(t, nc, "deep-input")
	subject := nodeSubject("deep-input", a.name, a.suffix)
	deep := deepArrays(1_000_000)
	for _, input := range []struct {
		task string
		body []byte
	}{
		{"nri.any-in", deep},
		{"nri.traceparent", append([]byte{0x81, 0xa1, 'Z'}, deep...)}, // a struct{}'s unknown field
	} {
		e, ok := registry.Lookup(input.task)
		require.True(t, ok)
		msg := appendCallHead(appendHeader(nil, header{kind: kindCall, id: 1, token: 77}),
			callHead{task: input.task, fingerprint: e.Fingerprint, heartbeat: uint64(time.Hour)})
		start := time.Now()
		reply, err := nc.Request(subject, append(msg, input.body...), 10*time.Second)
		require.NoError(t, err)
		h, body, err := parseHeader(reply.Data)
		require.NoError(t, err)
		t.Logf("%s: answered in %v", input.task, time.Since(start))
		assert.Equal(t, kindError, h.kind, "%s", body)
		assert.Contains(t, string(body), "nested more than 100 deep")
	}
	e, ok := registry.Lookup("nri.any-in")
	require.True(t, ok)
	h, _ := call(t, nc, subject, callHead{task: "nri.any-in", fingerprint: e.Fingerprint}, 0)
	assert.Equal(t, kindResult, h.kind, "the node goes on")
}
