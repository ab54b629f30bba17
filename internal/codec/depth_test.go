package codec

import (
	"bytes"
	"encoding/binary"
	"reflect"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5/msgpcode"

	"github.com/offloadgo/offload/internal/shmbuf"
)

// deepArrays is n one-element arrays within each other around the int
// 1: 0x91 0x91 ... 0x01, n+1 bytes.
func deepArrays(n int) []byte {
	return append(bytes.Repeat([]byte{msgpcode.FixedArrayLow | 1}, n), 1)
}

// limitStack makes the goroutine stack limit small for the rest of the
// test, so that a decode recursing once per level of a deep message
// fails loudly (fatal: stack overflow) where it would otherwise take up
// to a gigabyte. Not for parallel tests: the limit is the process's.
func limitStack(t *testing.T) {
	old := debug.SetMaxStack(16 << 20)
	t.Cleanup(func() { debug.SetMaxStack(old) })
}

type deepOut struct {
	A int
	V any
}

// A million nested arrays from another process is an error whatever the
// output's type, in a small stack: into an any, an any in a struct, a
// struct that skips it as an unknown field, a []byte, through a Peer; and
// as a panic's value it is kept as the worker's text.
func TestUnmarshalRefusesDeepNesting(t *testing.T) {
	limitStack(t)
	deep := deepArrays(1_000_000)
	for name, data := range map[string][]byte{
		"alone":            deep,
		"in an array":      append([]byte{0x92, 0x01}, deep...),
		"under a map key":  append([]byte{0x82, 0xa1, 'A', 0x01, 0xa1, 'V'}, deep...),
		"an unknown field": append([]byte{0x81, 0xa1, 'Z'}, deep...),
	} {
		for _, out := range []any{new(any), new(deepOut), new(struct{ A int }), new([]byte), new(map[string]any)} {
			require.ErrorIs(t, Unmarshal(data, out), shmbuf.ErrTooDeep, "%s into %T", name, out)
			require.ErrorIs(t, PeerUnmarshal(shmbuf.CopyPeer{}, data, out), shmbuf.ErrTooDeep, "%s into %T", name, out)
		}
	}

	body := append([]byte{panicValue}, binary.AppendUvarint(nil, uint64(len(deep)))...)
	body = append(append(body, deep...), "stack"...)
	value, stack := DecodePanic(body)
	assert.Equal(t, string(body), value, "what the worker said, as text")
	assert.Nil(t, stack)
}

type listNode struct {
	Next *listNode
	V    int
}

func list(n int) *listNode {
	var l *listNode
	for i := range n {
		l = &listNode{Next: l, V: i}
	}
	return l
}

// selfEncoded writes its msgpack itself: n nested arrays.
type selfEncoded int

func (s selfEncoded) MarshalMsgpack() ([]byte, error) { return deepArrays(int(s)), nil }

// A value nested deeper than its receiver decodes is refused where it is
// encoded, with an error that says so; one at the limit goes, and comes
// back equal.
func TestMarshalRefusesTooDeep(t *testing.T) {
	t.Parallel()
	deepMap := map[string]any{}
	for range shmbuf.MaxDepth {
		deepMap = map[string]any{"k": deepMap}
	}
	for name, v := range map[string]any{
		"a linked list":            list(shmbuf.MaxDepth + 1),
		"maps in maps":             deepMap,
		"its own encoding":         selfEncoded(shmbuf.MaxDepth + 1),
		"a list in a slice of any": []any{list(shmbuf.MaxDepth)},
	} {
		var buf bytes.Buffer
		err := MarshalInto(&buf, v)
		require.ErrorIs(t, err, ErrTooDeep, name)
		assert.Contains(t, err.Error(), "nested more than 100 deep", name)
		_, err = PeerEncodeInto(&buf, shmbuf.CopyPeer{}, v)
		require.ErrorIs(t, err, ErrTooDeep, name)
	}

	var buf bytes.Buffer
	buf.WriteString("head") // the codec encodes after a frame's header
	in := list(shmbuf.MaxDepth)
	require.NoError(t, MarshalInto(&buf, in))
	var out *listNode
	require.NoError(t, Unmarshal(buf.Bytes()[4:], &out))
	assert.Equal(t, in, out)
	buf.Reset()
	require.NoError(t, MarshalInto(&buf, selfEncoded(shmbuf.MaxDepth)))

	value, _ := DecodePanic(EncodePanic(list(shmbuf.MaxDepth+1), nil))
	assert.True(t, strings.HasPrefix(value.(string), "&{"), "a panic value too deep crosses as its text: %v", value)
}

// Only types that can nest too deep have their encoding scanned.
func TestMayNestTooDeep(t *testing.T) {
	t.Parallel()
	type row struct {
		ID   int
		Tags []string
		Meta map[string][]int
		When time.Time
		Skip any `msgpack:"-"`
	}
	for _, v := range []any{nil, 1, "s", []byte("b"), row{}, []row{}, map[string]row{}, &row{}, [3][]int{}} {
		assert.False(t, mayNestTooDeep(reflect.TypeOf(v)), "%T", v)
	}
	for _, v := range []any{list(1), listNode{}, []any{}, map[string]any{}, deepOut{}, selfEncoded(1), struct{ Err error }{}} {
		assert.True(t, mayNestTooDeep(reflect.TypeOf(v)), "%T", v)
	}
	assert.Equal(t, 4, typeDepth(reflect.TypeOf(map[string]row{}), map[reflect.Type]bool{}), "a map of structs holding a map of slices")
}
