package pool_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/offloadgo/offload/pool"
)

// What a Subprocess worker sees of structs, which the pool's codec sends
// as arrays of their fields where it can: omitempty fields, fields
// skipped, embedded structs, types with their own encoders, and structs
// held by an interface, which keep the map form.

type wireRow struct {
	ID    int
	Name  string            `msgpack:",omitempty"`
	Tags  []string          `msgpack:",omitempty"`
	Note  *string           `msgpack:",omitempty"`
	Attrs map[string]string `msgpack:",omitempty"`
	Skip  int               `msgpack:"-"`
	Temp  celsius
	Pair  viaStruct
	wireBase
}

type wireBase struct{ Shard uint8 }

// celsius encodes itself as a string such as "21.5C".
type celsius struct{ deg float64 }

func (c celsius) EncodeMsgpack(enc *msgpack.Encoder) error {
	return enc.EncodeString(strconv.FormatFloat(c.deg, 'g', -1, 64) + "C")
}

func (c *celsius) DecodeMsgpack(dec *msgpack.Decoder) error {
	s, err := dec.DecodeString()
	if err != nil {
		return err
	}
	c.deg, err = strconv.ParseFloat(strings.TrimSuffix(s, "C"), 64)
	return err
}

// viaStruct encodes itself through a struct of its own, with the encoder
// it is given.
type viaStruct struct{ a, b int }

type viaFields struct{ A, B int }

func (v viaStruct) EncodeMsgpack(enc *msgpack.Encoder) error {
	return enc.Encode(viaFields{A: v.a, B: v.b})
}

func (v *viaStruct) DecodeMsgpack(dec *msgpack.Decoder) error {
	var f viaFields
	if err := dec.Decode(&f); err != nil {
		return err
	}
	v.a, v.b = f.A, f.B
	return nil
}

type holder struct{ V any }

var (
	// bumpRows adds one to each ID and degree and to Pair, leaving the
	// rest as it came.
	bumpRows = pool.Register("test.bump-rows", func(_ context.Context, in []wireRow) ([]wireRow, error) {
		for i := range in {
			in[i].ID++
			in[i].Temp.deg++
			in[i].Pair.a++
			in[i].Pair.b++
		}
		return in, nil
	})
	// heldType says what the worker found in V.
	heldType = pool.Register("test.held-type", func(_ context.Context, in holder) (string, error) {
		return fmt.Sprintf("%T %v", in.V, in.V), nil
	})
	// holdRow returns a row inside an interface.
	holdRow = pool.Register("test.hold-row", func(_ context.Context, id int) (holder, error) {
		return holder{V: wireBase{Shard: uint8(id)}}, nil
	})
)

func TestSubprocessStructsRoundTrip(t *testing.T) {
	p, _ := newProcPool(t, pool.Options{Workers: 1})
	note := "note"
	in := []wireRow{
		{ID: 1},
		{ID: 2, Name: "two", Tags: []string{"a", ""}, Note: &note, Attrs: map[string]string{"k": "v"}, Skip: 9,
			Temp: celsius{21.5}, Pair: viaStruct{a: 3, b: 4}, wireBase: wireBase{Shard: 5}},
	}
	want := []wireRow{
		{ID: 2, Temp: celsius{1}, Pair: viaStruct{a: 1, b: 1}},
		{ID: 3, Name: "two", Tags: []string{"a", ""}, Note: &note, Attrs: map[string]string{"k": "v"},
			Temp: celsius{22.5}, Pair: viaStruct{a: 4, b: 5}, wireBase: wireBase{Shard: 5}},
	}
	got, err := pool.Run(testCtx(t), p, bumpRows, in)
	require.NoError(t, err)
	assert.Equal(t, want, got)
}

// A struct in an interface reaches the worker as a map of its fields, as
// it did before structs were array-encoded, and comes back the same way.
func TestSubprocessStructInInterface(t *testing.T) {
	p, _ := newProcPool(t, pool.Options{Workers: 1})
	got, err := pool.Run(testCtx(t), p, heldType, holder{V: wireBase{Shard: 7}})
	require.NoError(t, err)
	assert.Equal(t, "map[string]interface {} map[Shard:7]", got)

	out, err := pool.Run(testCtx(t), p, holdRow, 8)
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"Shard": uint8(8)}, out.V)
}
