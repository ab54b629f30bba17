package orders

import (
	"fmt"
	"slices"

	"github.com/vmihailenco/msgpack/v5"
)

// packedOrders is []Order with a hand-written msgpack codec: what a user
// does for a row type that crosses between processes often. msgpack's
// reflection looks each struct's fields up in a sync.Map and walks them
// through reflect, per row; this writes and reads the eight fields in
// order, as an array: the layout UseArrayEncodedStructs gives, with
// integers in their shortest form, so that either side reads the other's.
type packedOrders []Order

// orderFields is how many fields an encoded Order has.
const orderFields = 8

var (
	_ msgpack.CustomEncoder = packedOrders(nil)
	_ msgpack.CustomDecoder = (*packedOrders)(nil)
)

func (rows packedOrders) EncodeMsgpack(enc *msgpack.Encoder) error {
	if rows == nil {
		return enc.EncodeNil()
	}
	if err := enc.EncodeArrayLen(len(rows)); err != nil {
		return err
	}
	for i := range rows {
		if err := encodeOrder(enc, &rows[i]); err != nil {
			return err
		}
	}
	return nil
}

func encodeOrder(enc *msgpack.Encoder, o *Order) error {
	if err := enc.EncodeArrayLen(orderFields); err != nil {
		return err
	}
	if err := enc.EncodeInt(o.ID); err != nil {
		return err
	}
	if err := enc.EncodeInt(o.UserID); err != nil {
		return err
	}
	if err := enc.EncodeString(o.Email); err != nil {
		return err
	}
	if err := enc.EncodeFloat64(o.Amount); err != nil {
		return err
	}
	if err := enc.EncodeString(o.Status); err != nil {
		return err
	}
	if err := enc.EncodeString(o.CreatedAt); err != nil {
		return err
	}
	if o.Tags == nil {
		if err := enc.EncodeNil(); err != nil {
			return err
		}
	} else {
		if err := enc.EncodeArrayLen(len(o.Tags)); err != nil {
			return err
		}
		for _, t := range o.Tags {
			if err := enc.EncodeString(t); err != nil {
				return err
			}
		}
	}
	return enc.EncodeString(o.Note)
}

// maxPrealloc bounds what a decoded length may reserve up front, as
// msgpack's own limit of a million elements does; longer arrays grow as
// their elements arrive. A pool checks every length in a message against
// its bytes before decoding; this keeps a corrupt length from claiming
// gigabytes when the codec is used on its own.
const maxPrealloc = 1 << 20

func (rows *packedOrders) DecodeMsgpack(dec *msgpack.Decoder) error {
	n, err := dec.DecodeArrayLen()
	if err != nil {
		return err
	}
	if n < 0 {
		*rows = nil
		return nil
	}
	out := make(packedOrders, 0, min(n, maxPrealloc))
	r := rowReader{dec: dec}
	for i := range n {
		var o Order
		if err := r.order(&o); err != nil {
			return fmt.Errorf("orders: row %d: %w", i, err)
		}
		out = append(out, o)
	}
	*rows = out
	return nil
}

// rowReader decodes orders whose strings share one allocation per row:
// their bytes are gathered in text, then copied into one string that
// every string field of the row slices. That saves four or five
// allocations a row (msgpack makes one per string); the price is that one
// field kept alone keeps its row's other strings too, which for rows used
// whole is nothing.
type rowReader struct {
	dec   *msgpack.Decoder
	text  []byte // the row's string bytes, reused from row to row
	spans []span // where each string of the row is in text
}

// span is one string's place in rowReader.text.
type span struct{ from, to int }

// maxChunk is the most a string length read from the input may allocate
// before its bytes have arrived: a corrupt length costs at most this
// before the input runs out.
const maxChunk = 1 << 20

func (r *rowReader) order(o *Order) error {
	n, err := r.dec.DecodeArrayLen()
	if err != nil {
		return err
	}
	if n != orderFields {
		return fmt.Errorf("an order has %d fields, want %d", n, orderFields)
	}
	r.text, r.spans = r.text[:0], r.spans[:0]
	if o.ID, err = r.dec.DecodeInt64(); err != nil {
		return err
	}
	if o.UserID, err = r.dec.DecodeInt64(); err != nil {
		return err
	}
	if err = r.str(); err != nil { // Email
		return err
	}
	if o.Amount, err = r.dec.DecodeFloat64(); err != nil {
		return err
	}
	if err = r.str(); err != nil { // Status
		return err
	}
	if err = r.str(); err != nil { // CreatedAt
		return err
	}
	tags, err := r.dec.DecodeArrayLen()
	if err != nil {
		return err
	}
	for range tags {
		if err = r.str(); err != nil {
			return err
		}
	}
	if err = r.str(); err != nil { // Note
		return err
	}
	text := string(r.text)
	field := func(i int) string { return text[r.spans[i].from:r.spans[i].to] }
	o.Email, o.Status, o.CreatedAt = field(0), field(1), field(2)
	if tags >= 0 {
		o.Tags = make([]string, tags)
		for j := range o.Tags {
			o.Tags[j] = field(3 + j)
		}
	}
	o.Note = field(len(r.spans) - 1)
	return nil
}

// str reads one string (nil reads as "") into text and notes its span.
func (r *rowReader) str() error {
	n, err := r.dec.DecodeBytesLen()
	if err != nil {
		return err
	}
	from := len(r.text)
	for n > 0 {
		chunk := min(n, maxChunk)
		at := len(r.text)
		r.text = slices.Grow(r.text, chunk)[:at+chunk]
		if err := r.dec.ReadFull(r.text[at:]); err != nil {
			return err
		}
		n -= chunk
	}
	r.spans = append(r.spans, span{from, len(r.text)})
	return nil
}
