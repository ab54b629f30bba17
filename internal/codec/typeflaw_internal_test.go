package codec

import (
	"bytes"
	"math/big"
	"reflect"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/offloadgo/offload/transfer"
)

type (
	flawHidden   struct{ opts int }
	flawInSlice  struct{ Items []*flawHidden }
	flawMapKey   struct{ M map[flawHidden]int }
	flawEmbedPtr struct {
		*flawExported
		X int
	}
	flawEmbedInt struct {
		flawInt
		X int
	}
	flawInt        int
	flawByValue    struct{ B transfer.Buffer }
	flawEmbedValue struct {
		flawExported
		Y int
	}
	flawExported struct {
		A int
		z int
	}
	flawSkipped struct {
		A        int
		hidden   int      `msgpack:"-"`
		Hidden   chan int `msgpack:"-,omitempty"`
		_        int
		_msgpack struct{} `msgpack:",as_array"`
		none     [0]func()
	}
	flawCycle struct {
		Next *flawCycle
		V    int
	}
	flawSelf    struct{ n int }
	flawText    struct{ n int }
	flawEmbedOK struct {
		flawPlain
		Y int
	}
	flawPlain struct{ A int }
	flawMixed struct {
		When  time.Time
		Big   *big.Int
		Buf   *transfer.Buffer
		Self  flawSelf
		Text  *flawText
		Any   any
		Cycle flawCycle
	}
)

func (s flawSelf) EncodeMsgpack(enc *msgpack.Encoder) error { return enc.EncodeInt(int64(s.n)) }
func (s *flawSelf) DecodeMsgpack(dec *msgpack.Decoder) (err error) {
	s.n, err = dec.DecodeInt()
	return err
}
func (t *flawText) MarshalText() ([]byte, error) { return []byte{byte('0' + t.n)}, nil }
func (t *flawText) UnmarshalText(b []byte) error {
	t.n = int(b[0] - '0')
	return nil
}

// FlawOf finds what msgpack would skip or fail on, with its path, and
// passes what crosses intact.
func TestFlawOf(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		typ    reflect.Type
		path   string // "" with !flawed: no flaw
		zeroed bool
		why    string
		flawed bool
	}{
		{typ: reflect.TypeFor[flawHidden](), path: "opts", zeroed: true, flawed: true},
		{typ: reflect.TypeFor[flawInSlice](), path: "Items[i].opts", zeroed: true, flawed: true},
		{typ: reflect.TypeFor[map[string][]flawHidden](), path: "[k][i].opts", zeroed: true, flawed: true},
		{typ: reflect.TypeFor[flawMapKey](), path: "M[key].opts", zeroed: true, flawed: true},
		{typ: reflect.TypeFor[flawEmbedValue](), path: "flawExported.z", zeroed: true, flawed: true},
		{typ: reflect.TypeFor[flawEmbedPtr](), path: "flawExported", why: "can't set an embedded field", flawed: true},
		{typ: reflect.TypeFor[flawEmbedInt](), path: "flawInt", why: "can't set an embedded field", flawed: true},
		{typ: reflect.TypeFor[struct{ C chan int }](), path: "C", why: "can't encode a chan", flawed: true},
		{typ: reflect.TypeFor[struct{ F func() }](), path: "F", why: "can't encode a func", flawed: true},
		{typ: reflect.TypeFor[struct{ P unsafe.Pointer }](), path: "P", why: "can't encode a unsafe.Pointer", flawed: true},
		{typ: reflect.TypeFor[struct{ Z complex128 }](), path: "Z", why: "can't encode a complex128", flawed: true},
		{typ: reflect.TypeFor[struct{ U uintptr }](), path: "U", why: "can't encode a uintptr", flawed: true},
		{typ: reflect.TypeFor[chan int](), why: "can't encode a chan", flawed: true},
		{typ: reflect.TypeFor[flawByValue](), path: "B", why: "use *transfer.Buffer", flawed: true},
		{typ: reflect.TypeFor[flawSkipped]()},
		{typ: reflect.TypeFor[flawCycle]()},
		{typ: reflect.TypeFor[flawEmbedOK]()},
		{typ: reflect.TypeFor[flawMixed]()},
		{typ: reflect.TypeFor[*transfer.Buffer]()},
		{typ: reflect.TypeFor[[]byte]()},
		{typ: reflect.TypeFor[any]()},
	} {
		t.Run(tt.typ.String(), func(t *testing.T) {
			f := FlawOf(tt.typ)
			if !tt.flawed {
				assert.Nil(t, f)
				return
			}
			require.NotNil(t, f)
			assert.Equal(t, tt.path, f.Path)
			assert.Equal(t, tt.zeroed, f.Zeroed)
			assert.Contains(t, f.Why, tt.why)
			assert.Same(t, f, FlawOf(tt.typ), "cached")
		})
	}
}

// What FlawOf calls a flaw is what msgpack does: an unexported field
// comes back zeroed, a chan fails to encode, an embedded pointer of an
// unexported type fails to decode; and what it passes comes back whole.
func TestFlawOfAgreesWithMsgpack(t *testing.T) {
	t.Parallel()
	roundTrip := func(in, out any) (err error) {
		defer func() {
			if r := recover(); r != nil {
				err = assert.AnError
			}
		}()
		var buf bytes.Buffer
		if err := MarshalInto(&buf, in); err != nil {
			return err
		}
		return msgpack.Unmarshal(buf.Bytes(), out)
	}

	var hidden flawHidden
	require.NoError(t, roundTrip(flawHidden{opts: 7}, &hidden))
	assert.Zero(t, hidden.opts, "an unexported field arrives zeroed")

	var embed flawEmbedValue
	require.NoError(t, roundTrip(flawEmbedValue{flawExported{A: 1, z: 2}, 3}, &embed))
	assert.Equal(t, flawEmbedValue{flawExported{A: 1}, 3}, embed)

	assert.Error(t, roundTrip(struct{ C chan int }{}, new(struct{ C chan int })))
	assert.Error(t, roundTrip(struct{ U uintptr }{1}, new(struct{ U uintptr })))
	assert.Error(t, roundTrip(flawEmbedPtr{&flawExported{A: 1}, 1}, new(flawEmbedPtr)))
	assert.Error(t, roundTrip(flawEmbedInt{2, 1}, new(flawEmbedInt)))

	in := flawSkipped{A: 1, hidden: 2, _msgpack: struct{}{}, none: [0]func(){}}
	var skipped flawSkipped
	require.NoError(t, roundTrip(in, &skipped))
	in.hidden = 0 // tagged out: the receiver has its own
	assert.Equal(t, in, skipped)

	mixed := flawMixed{
		When:  time.Unix(1, 2),
		Big:   big.NewInt(42),
		Self:  flawSelf{n: 3},
		Text:  &flawText{n: 4},
		Cycle: flawCycle{Next: &flawCycle{V: 5}, V: 6},
	}
	var got flawMixed
	require.NoError(t, roundTrip(mixed, &got))
	assert.Equal(t, mixed, got)
}
