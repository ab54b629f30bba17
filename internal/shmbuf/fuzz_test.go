package shmbuf

import (
	"bytes"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"
)

// FuzzParseRef checks the reference layout: a payload either parses and
// re-encodes to itself, or is rejected with ErrBadRef.
func FuzzParseRef(f *testing.F) {
	f.Add(appendRef(nil, Ref{Segment: SegmentID{Arena: 1, Index: 2}, Offset: 3, Length: 4}))
	f.Add([]byte{refVersion})
	f.Add(make([]byte, refSize))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := parseRef(b)
		if err != nil {
			require.ErrorIs(t, err, ErrBadRef)
			return
		}
		require.Equal(t, b, appendRef(nil, r))
	})
}

// FuzzValidateMessage checks ValidateMessage against the decoder: what it
// accepts, msgpack can skip without running past the end, and what
// msgpack encodes, it accepts. A Buffer extension decodes outside a Peer
// into a handle only a Peer can resolve or encode again (ErrNoPeer), so
// a value holding one is not re-encoded.
func FuzzValidateMessage(f *testing.F) {
	for _, v := range []any{nil, 1, -1, 1.5, "s", []byte("b"), []any{1, "x", map[string]any{"k": []int{1}}}, map[int]bool{1: true}} {
		b, err := msgpack.Marshal(v)
		require.NoError(f, err)
		f.Add(b)
	}
	f.Add([]byte("\xdd00000000"))
	f.Add([]byte("\xdf\x21\x99\xd7\x13"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if err := ValidateMessage(b); err != nil {
			require.ErrorIs(t, err, ErrBadMessage)
			return
		}
		var v any
		dec := NewDecoder(bytes.NewReader(b))
		if err := dec.Decode(&v); err == nil {
			again, err := msgpack.Marshal(v)
			if errors.Is(err, ErrNoPeer) {
				return
			}
			require.NoError(t, err)
			require.NoError(t, ValidateMessage(again))
		}
	})
}
