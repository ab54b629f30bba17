package codec

import (
	"bytes"
	"testing"

	"github.com/offloadgo/offload/internal/shmbuf"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"
)

// A []byte the pool encoded decodes to the frame's own bytes, equal to
// what msgpack would have copied out, for each length form.
func TestUnmarshalBytesSharesTheFrame(t *testing.T) {
	for _, n := range []int{0, 1, 255, 256, 65535, 65536, 1 << 20} {
		in := bytes.Repeat([]byte{0xab}, n)
		var buf bytes.Buffer
		require.NoError(t, MarshalInto(&buf, in))
		data := buf.Bytes()

		var got []byte
		require.NoError(t, Unmarshal(data, &got))
		assert.Equal(t, in, got, "%d bytes", n)
		require.NotNil(t, got, "an empty []byte stays non-nil, as msgpack decodes it")
		if n > 0 {
			assert.Same(t, &data[len(data)-n], &got[0], "%d bytes are the frame's own", n)
			_ = append(got, 1) // capped: must not write past the frame's bytes
			assert.Equal(t, len(got), cap(got))
		}
	}
	var got []byte = []byte("old")
	require.NoError(t, Unmarshal([]byte{0xc0}, &got))
	assert.Nil(t, got)
}

// What isn't exactly one bin value goes to the general decoder and gets
// its answer: a str decodes, short bytes fail, a trailing byte is ignored.
// (msgpack itself is not asked about a length the validator refuses: it
// would allocate the 4 GiB the header claims, which is why the pool
// validates first — and that garbage once stalled the next tests' GCs.)
func TestUnmarshalBytesLeavesTheRestToMsgpack(t *testing.T) {
	for name, data := range map[string][]byte{
		"str":           {0xa2, 'h', 'i'},
		"trailing byte": {0xc4, 0x01, 'x', 'y'},
		"short body":    {0xc4, 0x02, 'x'},
		"short header":  {0xc5, 0x00},
		"huge length":   {0xc6, 0xff, 0xff, 0xff, 0xff},
	} {
		_, ok := rawBytes(data)
		require.False(t, ok, name)
		var got, want []byte
		err := Unmarshal(data, &got)
		if shmbuf.ValidateMessage(data) != nil || msgpack.Unmarshal(data, &want) != nil {
			assert.Error(t, err, name)
			continue
		}
		require.NoError(t, err, name)
		assert.Equal(t, want, got, name)
	}
}

// Whenever rawBytes takes a message, msgpack reads the same bytes from it.
func FuzzRawBytes(f *testing.F) {
	f.Add([]byte{0xc0})
	f.Add([]byte{0xc4, 0x01, 'x'})
	f.Add([]byte{0xc5, 0x00, 0x02, 'x', 'y'})
	f.Add([]byte{0xc6, 0x00, 0x00, 0x00, 0x00})
	f.Fuzz(func(t *testing.T, data []byte) {
		b, ok := rawBytes(data)
		if !ok {
			return
		}
		var want []byte
		require.NoError(t, msgpack.Unmarshal(data, &want))
		assert.Equal(t, want, b)
		assert.Equal(t, want == nil, b == nil)
	})
}
