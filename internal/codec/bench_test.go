package codec

import (
	"bytes"
	"fmt"
	"testing"
	"time"
)

// benchRow is a typical struct row: numbers, strings, a small slice.
type benchRow struct {
	ID       int64
	Customer string
	Price    float64
	Qty      int32
	Tags     []string
	When     time.Time
}

// benchPayloads are inputs and outputs of the shapes tasks send: small
// values, struct rows (array-encoded), a JSON-like map of anys, and a
// struct around a 1 MiB []byte (the bytes are one header to skip).
func benchPayloads() []struct {
	name string
	v    any
	out  func() any
} {
	rows := make([]benchRow, 1000)
	for i := range rows {
		rows[i] = benchRow{ID: int64(i), Customer: fmt.Sprintf("customer-%d", i), Price: float64(i) * 1.5, Qty: int32(i % 7),
			Tags: []string{"a", "bb"}, When: time.Unix(1_796_234_400+int64(i), 0)}
	}
	doc := map[string]any{}
	for i := range 100 {
		doc[fmt.Sprint("k", i)] = map[string]any{"n": i, "s": "text", "list": []any{1, "x", 2.5, map[string]any{"deep": true}}}
	}
	type blob struct {
		Name string
		Data []byte
	}
	return []struct {
		name string
		v    any
		out  func() any
	}{
		{"int", 42, func() any { return new(int) }},
		{"rows", rows, func() any { return new([]benchRow) }},
		{"map-any", doc, func() any { return new(map[string]any) }},
		{"blob-1MiB", blob{"b", bytes.Repeat([]byte{0x91}, 1<<20)}, func() any { return new(blob) }},
	}
}

// The codec's cost per payload, each way: what a Subprocess or Remote call
// pays to encode its input or output, and to validate and decode it.
//
//	go test ./internal/codec -run '^$' -bench 'Marshal|Unmarshal' -benchmem -count 6
func BenchmarkMarshalInto(b *testing.B) {
	for _, p := range benchPayloads() {
		b.Run(p.name, func(b *testing.B) {
			var buf bytes.Buffer
			for b.Loop() {
				buf.Reset()
				if err := MarshalInto(&buf, p.v); err != nil {
					b.Fatal(err)
				}
			}
			b.SetBytes(int64(buf.Len()))
		})
	}
}

func BenchmarkUnmarshal(b *testing.B) {
	for _, p := range benchPayloads() {
		var buf bytes.Buffer
		if err := MarshalInto(&buf, p.v); err != nil {
			b.Fatal(err)
		}
		data := buf.Bytes()
		b.Run(p.name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if err := Unmarshal(data, p.out()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
