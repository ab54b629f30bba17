package subproc

import (
	"bytes"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Encoding a big input costs about its size in memory, not the twice its
// size that growing a buffer by doubling does. The second call is sized
// from the first two; nothing is recycled (bodies are only recycled once
// written), so each call allocates its body.
func TestEncodeSizesBody(t *testing.T) {
	sp := &ProcessCarrier{maxPayload: 64 << 20}
	type row struct { // nothing msgpack allocates for as it encodes
		ID    int
		Name  string
		Price float64
	}
	rows := make([]row, 40_000)
	for i := range rows {
		rows[i] = row{ID: i, Name: "row", Price: float64(i) / 4}
	}
	var first []byte
	for range 2 {
		var err error
		first, err = sp.encode("rows", nil, rows)
		require.NoError(t, err)
	}
	for _, in := range []any{rows, bytes.Repeat([]byte{1}, len(first))} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		body, err := sp.encode("rows", nil, in)
		runtime.ReadMemStats(&after)
		require.NoError(t, err)
		allocated := after.TotalAlloc - before.TotalAlloc
		assert.Less(t, allocated, uint64(len(body))*5/4, "%T: %d bytes allocated for a body of %d", in, allocated, len(body))
	}
}
