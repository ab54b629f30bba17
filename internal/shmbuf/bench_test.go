package shmbuf

import (
	"testing"

	"github.com/vmihailenco/msgpack/v5"
)

type plainIn struct {
	ID    int
	Name  string
	Score float64
	Tags  []string
}

type withBuffer struct {
	ID  int
	Buf *Buffer
}

var (
	sinkInt    int
	sinkString string
)

// BenchmarkMoveValue is the cost of moving a value's Buffers with Moved,
// as the pool moves an in-process task's output (its input moves in place,
// with MoveAt): ~free for types that can't hold a Buffer.
func BenchmarkMoveValue(b *testing.B) {
	b.Run("int", func(b *testing.B) {
		for b.Loop() {
			v, _ := Moved(42)
			sinkInt = v
		}
	})
	b.Run("string", func(b *testing.B) {
		for b.Loop() {
			v, _ := Moved("hello")
			sinkString = v
		}
	})
	b.Run("plain-struct", func(b *testing.B) {
		in := plainIn{ID: 1, Name: "x", Tags: []string{"a"}}
		for b.Loop() {
			v, _ := Moved(in)
			sinkInt = v.ID
		}
	})
	b.Run("struct-with-buffer", func(b *testing.B) {
		buf, _ := NewBuffer(1024)
		in := withBuffer{ID: 1, Buf: buf}
		for b.Loop() {
			in, _ = Moved(in)
		}
		in.Buf.Release()
	})
}

var sizes = []struct {
	name string
	n    int
}{{"1KB", 1 << 10}, {"1MB", 1 << 20}, {"44MB", 44 << 20}}

// BenchmarkMoveInProcess moves one Buffer back and forth: O(1) whatever its
// size.
func BenchmarkMoveInProcess(b *testing.B) {
	for _, s := range sizes {
		b.Run(s.name, func(b *testing.B) {
			buf, err := NewBuffer(s.n)
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				buf, _ = Moved(buf)
			}
			buf.Release()
		})
	}
}

// BenchmarkNewBufferRelease allocates and frees 44 MiB: in an arena that is
// warm (space reused, no new mapping; the cost is zeroing the reused bytes)
// and, for comparison, in a fresh arena each time (memfd + mmap + first
// touch of every page, what a per-request mapping would cost).
func BenchmarkNewBufferRelease(b *testing.B) {
	const n = 44 << 20
	b.Run("warm-44MB", func(b *testing.B) {
		a := newArena()
		defer a.close()
		warm, _ := a.alloc(n)
		warm.free()
		for b.Loop() {
			blk, err := a.alloc(n)
			if err != nil {
				b.Fatal(err)
			}
			blk.free()
		}
		if a.stats().Segments != 1 {
			b.Fatalf("warm arena grew to %d segments", a.stats().Segments)
		}
	})
	b.Run("warm-1KB", func(b *testing.B) {
		for b.Loop() {
			buf, _ := NewBuffer(1 << 10)
			buf.Release()
		}
	})
	b.Run("fresh-mapping-44MB", func(b *testing.B) {
		for b.Loop() {
			a := newArena()
			blk, err := a.alloc(n)
			if err != nil {
				b.Fatal(err)
			}
			clear(blk.data) // touch every page, as the writer of the data would
			a.close()
		}
	})
}

// BenchmarkBaseline is an identity function through the same loop, to read
// BenchmarkMoveValue against on a noisy machine.
func BenchmarkBaseline(b *testing.B) {
	for b.Loop() {
		v, _ := identity(plainIn{ID: 1})
		sinkInt = v.ID
	}
}

//go:noinline
func identity[T any](v T) (T, error) { return v, nil }

// BenchmarkValidateMessage is the check every message from another
// process passes before it is decoded, per byte of typical payloads:
// struct rows (many small values, the most work a byte) and a JSON-like
// map of anys.
func BenchmarkValidateMessage(b *testing.B) {
	rows := make([]plainIn, 1000)
	for i := range rows {
		rows[i] = plainIn{ID: i, Name: "customer", Score: float64(i) / 3, Tags: []string{"a", "bb"}}
	}
	doc := map[string]any{}
	for i := range 100 {
		doc[string(rune('a'+i%26))+string(rune('a'+i/26))] = map[string]any{"n": i, "s": "text", "list": []any{1, "x", 2.5, map[string]any{"deep": true}}}
	}
	for _, p := range []struct {
		name string
		v    any
	}{{"rows", rows}, {"map-any", doc}} {
		data, err := msgpack.Marshal(p.v)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(p.name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if err := ValidateMessage(data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
