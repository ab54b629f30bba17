package orders

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/vmihailenco/msgpack/v5"
)

// For context beside the orders table: what msgpack itself costs for the
// trap's 250,000 rows, with structs encoded as maps (field names in every
// row) and as arrays (UseArrayEncodedStructs: positional, safe only where
// both ends are the same binary, as a Subprocess pool's are; the pool's
// codec does this where the type allows it).
//
//	go test ./bench/orders -run '^$' -bench Msgpack -benchmem -count 6
func BenchmarkMsgpackRows(b *testing.B) {
	const n = 250_000
	rows := makeOrders(n)
	for _, structs := range []struct {
		name  string
		array bool
	}{{"map", false}, {"array", true}} {
		encoded, err := encodeRows(rows, structs.array)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("rows=%d/structs=%s/op=encode", n, structs.name), func(b *testing.B) {
			b.SetBytes(int64(len(encoded)))
			for b.Loop() {
				if _, err := encodeRows(rows, structs.array); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("rows=%d/structs=%s/op=decode", n, structs.name), func(b *testing.B) {
			b.SetBytes(int64(len(encoded)))
			for b.Loop() {
				var got []Order
				if err := msgpack.Unmarshal(encoded, &got); err != nil {
					b.Fatal(err)
				}
				if len(got) != n {
					b.Fatalf("decoded %d rows, want %d", len(got), n)
				}
			}
		})
	}
}

// encodeRows is rows in msgpack, structs as arrays or as maps.
func encodeRows(rows []Order, array bool) ([]byte, error) {
	var buf bytes.Buffer
	enc := msgpack.NewEncoder(&buf)
	enc.UseArrayEncodedStructs(array)
	if err := enc.Encode(rows); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
