package codec

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"
	"github.com/vmihailenco/msgpack/v5/msgpcode"

	"github.com/offloadgo/offload/transfer"
)

type codecRow struct {
	ID    int
	Name  string            `msgpack:",omitempty"`
	Tags  []string          `msgpack:",omitempty"`
	Note  *string           `msgpack:",omitempty"`
	Attrs map[string]string `msgpack:",omitempty"`
	Skip  int               `msgpack:"-"`
	When  time.Time
	codecBase
}

type codecBase struct{ Shard uint8 }

type codecNode struct {
	Next *codecNode
	V    int
}

type codecLoop struct {
	Next *codecLoop
	V    any
}

type codecHidden struct {
	X int
	//lint:ignore U1000 never read: it is here to show the codec skips it
	hidden any
	Tagged any `msgpack:"-"`
}

type codecWithBuffer struct {
	Name  string
	Parts []*transfer.Buffer
}

func TestArrayStructs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		v    any
		want bool
	}{
		{"nil", nil, false},
		{"bytes", []byte("x"), true},
		{"struct", codecRow{}, true},
		{"pointer to struct", &codecRow{}, true},
		{"slice of structs", []codecRow{}, true},
		{"recursive", codecNode{}, true},
		{"recursive holding an interface", codecLoop{}, false},
		{"interface fields msgpack skips", codecHidden{}, true},
		{"Buffers", codecWithBuffer{}, true},
		{"field of type any", struct{ V any }{}, false},
		{"map of any", map[string]any{}, false},
		{"slice of any", []any{}, false},
		{"struct as a map key", map[struct{ K any }]int{}, false},
		{"error field", struct{ Err error }{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, arrayStructs(tt.v))
			assert.Equal(t, tt.want, arrayStructs(tt.v), "cached")
		})
	}
}

// A struct goes as an array of its fields and comes back equal, the
// omitempty fields empty or not; one an interface can hold goes as a map.
func TestMarshalIntoStructForms(t *testing.T) {
	t.Parallel()
	note := "n"
	when := time.Unix(1_796_234_400, 0) // msgpack decodes a time in time.Local
	for _, in := range []codecRow{
		{ID: 1, When: when},
		{ID: 2, Name: "x", Tags: []string{"a", ""}, Note: &note, Attrs: map[string]string{"k": "v"}, When: when, codecBase: codecBase{Shard: 7}},
	} {
		var buf bytes.Buffer
		require.NoError(t, MarshalInto(&buf, in))
		assert.True(t, msgpcode.IsFixedArray(buf.Bytes()[0]), "first byte %#x", buf.Bytes()[0])
		var out codecRow
		require.NoError(t, Unmarshal(buf.Bytes(), &out))
		assert.Equal(t, in, out)
	}

	var buf bytes.Buffer
	require.NoError(t, MarshalInto(&buf, struct{ V any }{V: codecBase{Shard: 3}}))
	assert.True(t, msgpcode.IsFixedMap(buf.Bytes()[0]), "first byte %#x", buf.Bytes()[0])
	var out struct{ V any }
	require.NoError(t, Unmarshal(buf.Bytes(), &out))
	assert.Equal(t, map[string]any{"Shard": uint8(3)}, out.V)
}

// The encoder's array mode is the pool's own: an encoder from msgpack's
// pool that others use afterwards encodes maps again.
func TestMarshalIntoLeavesEncodersAsFound(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, MarshalInto(&buf, codecBase{Shard: 1}))
	for range 10 {
		b, err := msgpack.Marshal(codecBase{Shard: 1})
		require.NoError(t, err)
		assert.True(t, msgpcode.IsFixedMap(b[0]), "first byte %#x", b[0])
	}
}

func TestSizeHints(t *testing.T) {
	t.Parallel()
	var h SizeHints
	assert.Equal(t, minBody, h.Guess("t", 3), "a task not seen yet")
	assert.GreaterOrEqual(t, h.Guess("t", make([]byte, 1000)), 1000+binHeader)
	assert.GreaterOrEqual(t, h.Guess("t", strings.Repeat("s", 1000)), 1000+binHeader)
	h.Record("t", 5000)
	assert.Equal(t, minBody, h.Guess("t", 3), "the smaller of 0 and 5000")
	h.Record("t", 5000)
	assert.GreaterOrEqual(t, h.Guess("t", 3), 5000)
	assert.Less(t, h.Guess("t", 3), 6000)
	h.Record("t", 100)
	assert.Less(t, h.Guess("t", 3), 200, "small after big")
	h.Record("t", 50_000)
	assert.Less(t, h.Guess("t", 3), 200, "big after small")
	h.Record("t", 40_000)
	assert.GreaterOrEqual(t, h.Guess("t", 3), 40_000)
	assert.Equal(t, minBody, h.Guess("other", 3))
}

func TestBodies(t *testing.T) {
	t.Parallel()
	var bs Bodies
	for _, n := range []int{0, 10, 1 << 16, 10} {
		b := bs.Get(n)
		assert.Empty(t, b)
		assert.GreaterOrEqual(t, cap(b), n)
		bs.Recycle(append(b, 1, 2, 3))
	}
}
