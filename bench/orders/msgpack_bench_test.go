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
// codec does this where the type allows it), and through packedOrders'
// hand-written codec, which writes the array layout with shortest-form
// integers.
//
//	go test ./bench/orders -run '^$' -bench Msgpack -benchmem -count 6
func BenchmarkMsgpackRows(b *testing.B) {
	const n = 250_000
	rows := makeOrders(n)
	for _, structs := range []struct {
		name   string
		encode func([]Order) ([]byte, error)
		decode func([]byte) (int, error)
	}{
		{"map", func(r []Order) ([]byte, error) { return encodeRows(r, false) }, decodeReflect},
		{"array", func(r []Order) ([]byte, error) { return encodeRows(r, true) }, decodeReflect},
		{"codec", encodePacked, decodePacked},
	} {
		encoded, err := structs.encode(rows)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("rows=%d/structs=%s/op=encode", n, structs.name), func(b *testing.B) {
			b.SetBytes(int64(len(encoded)))
			for b.Loop() {
				if _, err := structs.encode(rows); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("rows=%d/structs=%s/op=decode", n, structs.name), func(b *testing.B) {
			b.SetBytes(int64(len(encoded)))
			for b.Loop() {
				got, err := structs.decode(encoded)
				if err != nil {
					b.Fatal(err)
				}
				if got != n {
					b.Fatalf("decoded %d rows, want %d", got, n)
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

// encodePacked is rows in msgpack through packedOrders' codec.
func encodePacked(rows []Order) ([]byte, error) { return msgpack.Marshal(packedOrders(rows)) }

// decodeReflect and decodePacked decode rows and say how many there were.
func decodeReflect(data []byte) (int, error) {
	var got []Order
	err := msgpack.Unmarshal(data, &got)
	return len(got), err
}

func decodePacked(data []byte) (int, error) {
	var got packedOrders
	err := msgpack.Unmarshal(data, &got)
	return len(got), err
}
