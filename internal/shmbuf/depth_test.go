package shmbuf

import (
	"bytes"
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"
	"github.com/vmihailenco/msgpack/v5/msgpcode"
)

// deepArrays is n one-element arrays within each other around the int
// 1: the attack of n+1 bytes, 0x91 0x91 ... 0x01.
func deepArrays(n int) []byte {
	return append(bytes.Repeat([]byte{msgpcode.FixedArrayLow | 1}, n), 1)
}

// deepMaps is n one-entry maps within each other, each under key "k".
func deepMaps(n int) []byte {
	return append(bytes.Repeat([]byte{msgpcode.FixedMapLow | 1, msgpcode.FixedStrLow | 1, 'k'}, n), 1)
}

func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

// Arrays and maps nest MaxDepth deep at most, counted however they are
// written (fixed, 16 or 32-bit headers; keys too), empty ones included;
// siblings don't add up, and the bytes of strings, bins and extensions
// are skipped, not read as headers.
func TestValidateMessageDepth(t *testing.T) {
	t.Parallel()
	flood := bytes.Repeat([]byte{0x91}, 200)
	accepted := map[string][]byte{
		"MaxDepth arrays":                deepArrays(MaxDepth),
		"MaxDepth maps":                  deepMaps(MaxDepth),
		"an empty array at MaxDepth":     cat(bytes.Repeat([]byte{0x91}, MaxDepth-1), []byte{0x90}),
		"siblings each at MaxDepth":      cat([]byte{0x92}, deepArrays(MaxDepth-1), deepArrays(MaxDepth-1)),
		"0x91 bytes in a bin":            cat([]byte{msgpcode.Bin8, 200}, flood),
		"0x91 bytes in a str":            cat([]byte{msgpcode.Str8, 200}, flood),
		"0x91 bytes in an extension":     cat([]byte{msgpcode.Ext8, 200, 7}, flood),
		"array16 headers, MaxDepth deep": cat(bytes.Repeat([]byte{msgpcode.Array16, 0, 1}, MaxDepth), []byte{1}),
	}
	for name, data := range accepted {
		assert.NoError(t, ValidateMessage(data), name)
	}
	refused := map[string][]byte{
		"MaxDepth+1 arrays":                 deepArrays(MaxDepth + 1),
		"MaxDepth+1 maps":                   deepMaps(MaxDepth + 1),
		"an empty array at MaxDepth+1":      cat(bytes.Repeat([]byte{0x91}, MaxDepth), []byte{0x90}),
		"the second sibling too deep":       cat([]byte{0x92}, deepArrays(MaxDepth-1), deepArrays(MaxDepth)),
		"array32 headers":                   cat(bytes.Repeat([]byte{msgpcode.Array32, 0, 0, 0, 1}, MaxDepth+1), []byte{1}),
		"a map32 key MaxDepth deep":         cat([]byte{msgpcode.Map32, 0, 0, 0, 1}, deepArrays(MaxDepth), []byte{1}),
		"a megabyte of 0x91, unterminated":  bytes.Repeat([]byte{0x91}, 1<<20),
		"a million arrays around an int":    deepArrays(1_000_000),
		"a million map16s around an int":    cat(bytes.Repeat([]byte{msgpcode.Map16, 0, 1, msgpcode.Nil}, 1_000_000), []byte{1}),
		"arrays under a bin's worth of str": cat([]byte{0x92, msgpcode.Str8, 200}, flood, deepArrays(MaxDepth)),
	}
	for name, data := range refused {
		err := ValidateMessage(data)
		assert.ErrorIs(t, err, ErrTooDeep, name)
		assert.ErrorIs(t, err, ErrBadMessage, name)
	}
	assert.EqualError(t, ValidateMessage(deepArrays(MaxDepth+1)),
		"transfer: malformed message: arrays and maps nested more than 100 deep, at byte 100")
}

// limitStack makes the goroutine stack limit small for the rest of the
// test, so that a decode recursing once per level of a deep message
// fails loudly (fatal: stack overflow) where it would otherwise take a
// gigabyte. Not for parallel tests: the limit is the process's.
func limitStack(t testing.TB) {
	old := debug.SetMaxStack(16 << 20)
	t.Cleanup(func() { debug.SetMaxStack(old) })
}

// Both Peers refuse a million nested arrays, into any type, with an
// error and in bounded stack (see limitStack), holding nothing after.
func TestPeersRefuseDeepMessages(t *testing.T) {
	limitStack(t)
	deep := deepArrays(1_000_000)
	for _, out := range []any{new(any), new([]*Buffer), new(taskIn), new(map[string]any)} {
		err := CopyPeer{}.Unmarshal(deep, out)
		require.ErrorIs(t, err, ErrTooDeep, "%T", out)
	}
	var v, want any
	require.NoError(t, CopyPeer{}.Unmarshal(deepArrays(MaxDepth), &v), "MaxDepth decodes")
	require.NoError(t, msgpack.Unmarshal(deepArrays(MaxDepth), &want))
	assert.Equal(t, want, v)
}
