package shmbuf

import (
	"bytes"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"
	"github.com/vmihailenco/msgpack/v5/msgpcode"
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
// accepts, msgpack can skip without running past the end, decode in a
// small stack, and finds nested MaxDepth deep at most, and what it refuses
// as too deep, msgpack finds deeper; what msgpack encodes, it accepts. A
// Buffer extension decodes outside a Peer into a handle only a Peer can
// resolve or encode again (ErrNoPeer), so a value holding one is not
// re-encoded.
func FuzzValidateMessage(f *testing.F) {
	for _, v := range []any{nil, 1, -1, 1.5, "s", []byte("b"), []any{1, "x", map[string]any{"k": []int{1}}}, map[int]bool{1: true}} {
		b, err := msgpack.Marshal(v)
		require.NoError(f, err)
		f.Add(b)
	}
	f.Add([]byte("\xdd00000000"))
	f.Add([]byte("\xdf\x21\x99\xd7\x13"))
	for _, n := range []int{MaxDepth, MaxDepth + 1, 1000} {
		f.Add(deepArrays(n))
		f.Add(deepMaps(n))
	}
	f.Add(cat([]byte{0x92}, deepArrays(MaxDepth-1), deepArrays(MaxDepth)))
	limitStack(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		if err := ValidateMessage(b); err != nil {
			require.ErrorIs(t, err, ErrBadMessage)
			if errors.Is(err, ErrTooDeep) {
				depth, _ := depthOf(msgpack.NewDecoder(bytes.NewReader(b)), 0)
				require.Greater(t, depth, MaxDepth)
			}
			return
		}
		depth, err := depthOf(msgpack.NewDecoder(bytes.NewReader(b)), 0)
		require.NoError(t, err)
		require.LessOrEqual(t, depth, MaxDepth)
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

// depthOf reads one value with dec and returns how deeply its arrays and
// maps nest below level, by msgpack's own reading; on an error it returns
// the depth reached until then, and past MaxDepth it stops with
// errPastMaxDepth.
func depthOf(dec *msgpack.Decoder, level int) (int, error) {
	if level > MaxDepth {
		return level, errPastMaxDepth
	}
	c, err := dec.PeekCode()
	if err != nil {
		return level, err
	}
	var n int
	switch {
	case msgpcode.IsFixedArray(c) || c == msgpcode.Array16 || c == msgpcode.Array32:
		n, err = dec.DecodeArrayLen()
	case msgpcode.IsFixedMap(c) || c == msgpcode.Map16 || c == msgpcode.Map32:
		n, err = dec.DecodeMapLen()
		n *= 2
	default:
		return level, dec.Skip()
	}
	deepest := level + 1
	for i := 0; err == nil && i < n; i++ {
		var d int
		d, err = depthOf(dec, level+1)
		deepest = max(deepest, d)
	}
	return deepest, err
}

var errPastMaxDepth = errors.New("past MaxDepth")
