package orders

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"
)

// The hand-written codec reads every field back, and speaks the layout of
// msgpack's array-encoded structs: each side decodes the other's bytes.
func TestPackedOrdersRoundTripAndMatchArrayEncoding(t *testing.T) {
	rows := makeOrders(500)
	rows[3].Tags = nil // both nil and empty tags must survive
	rows[4].Tags = []string{}

	packed, err := msgpack.Marshal(packedOrders(rows))
	require.NoError(t, err)
	var back packedOrders
	require.NoError(t, msgpack.Unmarshal(packed, &back))
	assert.Equal(t, rows, []Order(back))
	assert.Nil(t, back[3].Tags)
	assert.NotNil(t, back[4].Tags)

	var reflected []Order
	require.NoError(t, msgpack.Unmarshal(packed, &reflected))
	assert.Equal(t, rows, reflected, "reflection reads the codec's bytes")
	arrays, err := encodeRows(rows, true)
	require.NoError(t, err)
	back = nil
	require.NoError(t, msgpack.Unmarshal(arrays, &back))
	assert.Equal(t, rows, []Order(back), "the codec reads reflection's bytes")

	none := packedOrders{}
	require.NoError(t, msgpack.Unmarshal([]byte{0xc0}, &none))
	assert.Nil(t, none, "nil decodes to a nil slice")
}

// Corrupt input is an error, never a panic or a wrong row.
func TestPackedOrdersRejectCorruptInput(t *testing.T) {
	good, err := msgpack.Marshal(packedOrders(makeOrders(3)))
	require.NoError(t, err)
	for name, data := range map[string][]byte{
		"empty":            {},
		"truncated":        good[:len(good)-1],
		"not an array":     {0xa1, 'x'},
		"short row":        {0x91, 0x97, 0x01, 0x02, 0xa0, 0x00, 0xa0, 0xa0, 0x90},
		"string for an id": {0x91, 0x98, 0xa1, 'x'},
		"huge length":      {0xdd, 0xff, 0xff, 0xff, 0xff},
	} {
		t.Run(name, func(t *testing.T) {
			var rows packedOrders
			assert.Error(t, msgpack.Unmarshal(data, &rows))
		})
	}
}

// Whatever the bytes, decoding returns rows or an error; rows that decode
// encode back to bytes that decode to rows that encode to those bytes.
func FuzzPackedOrders(f *testing.F) {
	good, err := msgpack.Marshal(packedOrders(makeOrders(2)))
	require.NoError(f, err)
	f.Add(good)
	f.Add([]byte{0xc0})
	f.Add([]byte{0x91, 0x98, 0x01})
	f.Fuzz(func(t *testing.T, data []byte) {
		var rows packedOrders
		if msgpack.Unmarshal(data, &rows) != nil {
			return
		}
		again, err := msgpack.Marshal(rows)
		require.NoError(t, err)
		var back packedOrders
		require.NoError(t, msgpack.Unmarshal(again, &back))
		// Compared encoded, not as values: a NaN amount survives the
		// round trip bit for bit but is never equal to itself.
		last, err := msgpack.Marshal(back)
		require.NoError(t, err)
		assert.Equal(t, again, last)
	})
}
