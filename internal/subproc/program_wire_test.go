package subproc

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/internal/outcome"
	"github.com/offloadgo/offload/internal/seam"
)

// The program dialect's bytes are sdk/PROTOCOL.md's: a change is a new
// ProgramVersion, and the SDKs' too.
func TestProgramAnswerBytes(t *testing.T) {
	want := map[byte]outcome.Kind{
		0x03: outcome.Result,
		0x04: outcome.Raised,
		0x06: outcome.TooLarge,
		0x07: outcome.Unknown,
	}
	assert.Len(t, programAnswers, len(want))
	for b, k := range want {
		assert.Equal(t, k, programAnswers.Kind(b), "byte %#x", b)
	}
	for _, b := range []byte{0, progCall, progCancel, 0x05, 0x08, 0xFF} {
		assert.Zero(t, programAnswers.Kind(b), "byte %#x names no answer", b)
	}
	assert.Equal(t, []byte{1, 2}, []byte{progCall, progCancel})
	assert.Equal(t, 1, ProgramVersion)
}

func TestMessageRoundTrip(t *testing.T) {
	body := appendMessage(nil, []byte(`{"output":{"A":1},"blob":"B"}`), []byte{0, 1, 2})
	var h answerHeader
	blob, err := splitMessage(body, &h)
	require.NoError(t, err)
	assert.Equal(t, []byte{0, 1, 2}, blob)
	assert.Equal(t, "B", h.Blob)
	assert.JSONEq(t, `{"A":1}`, string(h.Output))
}

func TestSplitMessageRefusesMalformed(t *testing.T) {
	for name, body := range map[string][]byte{
		"empty":          nil,
		"short length":   {0, 0, 1},
		"length past":    {0, 0, 0, 9, '{', '}'},
		"empty header":   {0, 0, 0, 0},
		"not an object":  appendMessage(nil, []byte(`[1]`), nil),
		"not JSON":       appendMessage(nil, []byte(`{nope`), nil),
		"wrong type":     appendMessage(nil, []byte(`{"recycle":"yes"}`), nil),
		"huge length":    {0xff, 0xff, 0xff, 0xff, '{'},
		"trailing bytes": appendMessage(nil, []byte(`{} x`), nil),
	} {
		var h answerHeader
		_, err := splitMessage(body, &h)
		require.Error(t, err, name)
		assert.True(t, errors.Is(err, errMalformed), "%s: %v", name, err)
	}
}

func TestProgramCancelCauses(t *testing.T) {
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	deadline, cancel := context.WithDeadline(context.Background(), time.Unix(0, 0))
	defer cancel()
	closed, cancelCause := context.WithCancelCause(context.Background())
	cancelCause(seam.ErrClosed)
	for want, ctx := range map[string]context.Context{"canceled": canceled, "deadline": deadline, "closed": closed} {
		f := programCancel(7, ctx)
		assert.Equal(t, progCancel, f.Kind)
		assert.Equal(t, uint64(7), f.ID)
		var h struct{ Cause string }
		blob, err := splitMessage(f.Body, &h)
		require.NoError(t, err)
		assert.Empty(t, blob)
		assert.Equal(t, want, h.Cause)
	}
}

// FuzzSplitMessage: whatever a program sends, reading it returns a header
// or errMalformed, and never panics.
func FuzzSplitMessage(f *testing.F) {
	f.Add(appendMessage(nil, []byte(`{"output":1}`), []byte("blob")))
	f.Add(appendMessage(nil, []byte(`{"type":"E","message":"m","traceback":"t"}`), nil))
	f.Add([]byte{0, 0, 0, 1, '{'})
	f.Fuzz(func(t *testing.T, body []byte) {
		var h answerHeader
		blob, err := splitMessage(body, &h)
		if err != nil {
			if !errors.Is(err, errMalformed) {
				t.Fatalf("error not errMalformed: %v", err)
			}
			return
		}
		if len(blob) > len(body) {
			t.Fatalf("blob of %d bytes from a body of %d", len(blob), len(body))
		}
		if _, err := json.Marshal(h); err != nil {
			t.Fatal(err)
		}
	})
}
