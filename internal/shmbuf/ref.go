package shmbuf

import (
	"encoding/binary"
	"errors"
	"fmt"
	"reflect"

	"github.com/vmihailenco/msgpack/v5"
)

// extID is the msgpack extension type a *Buffer is encoded as. Other code
// sharing the msgpack registry must not register it.
const extID int8 = 42

// refVersion leads every encoded reference, so the layout can change.
const refVersion = 1

// copyVersion leads a Buffer that crosses by copy (see CopyPeer): its
// bytes follow.
const copyVersion = 2

// refSize is the size of an encoded reference: version, arena, index,
// offset, length (big endian).
const refSize = 1 + 8 + 4 + 8 + 8

// appendRef encodes r.
func appendRef(dst []byte, r Ref) []byte {
	dst = append(dst, refVersion)
	dst = binary.BigEndian.AppendUint64(dst, r.Segment.Arena)
	dst = binary.BigEndian.AppendUint32(dst, r.Segment.Index)
	dst = binary.BigEndian.AppendUint64(dst, r.Offset)
	return binary.BigEndian.AppendUint64(dst, r.Length)
}

// parseRef decodes an encoded reference. It checks the layout only; whether
// the reference is in bounds is for Peer.Decode, which knows the segments.
func parseRef(b []byte) (Ref, error) {
	if len(b) != refSize {
		return Ref{}, fmt.Errorf("%w: payload of %d bytes, want %d", ErrBadRef, len(b), refSize)
	}
	if b[0] != refVersion {
		return Ref{}, fmt.Errorf("%w: version %d, want %d", ErrBadRef, b[0], refVersion)
	}
	return Ref{
		Segment: SegmentID{Arena: binary.BigEndian.Uint64(b[1:9]), Index: binary.BigEndian.Uint32(b[9:13])},
		Offset:  binary.BigEndian.Uint64(b[13:21]),
		Length:  binary.BigEndian.Uint64(b[21:29]),
	}, nil
}

// RegisterExt makes msgpack encode and decode the *Buffer type of
// bufferPtr (a nil pointer to a bufferShaped struct) as the Buffer
// extension, extID. Package transfer calls it at init for *transfer.Buffer,
// as a codec registers itself: it only fills msgpack's type table, so that
// a Buffer met by plain msgpack fails with ErrNoPeer and one in a message
// decodes into a handle a Peer can resolve. It panics for any other type:
// a programming error.
func RegisterExt(bufferPtr any) {
	t := reflect.TypeOf(bufferPtr)
	if t == nil || t.Kind() != reflect.Pointer || !bufferShaped(t.Elem()) {
		panic(fmt.Sprintf("shmbuf: RegisterExt(%T): not a pointer to a struct whose only field is a Handle", bufferPtr))
	}
	msgpack.RegisterExtEncoder(extID, bufferPtr, encodeBufferExt)
	msgpack.RegisterExtDecoder(extID, bufferPtr, decodeBufferExt)
}

// msgpackKnows reports whether msgpack encodes the *Buffer type t with the
// Buffer extension, by encoding a fresh one, which the extension refuses
// with ErrNoPeer. Without it (a type defined over transfer.Buffer) msgpack
// would write an empty struct, and a Peer would lend memory that nothing
// in the message names.
func msgpackKnows(t reflect.Type) bool {
	p, _ := newBufferOf(t)
	_, err := msgpack.Marshal(p.Interface())
	return errors.Is(err, ErrNoPeer)
}

// encodeBufferExt writes a Buffer handle made by a Peer's Encode: as its
// Ref (refVersion), or as its bytes (copyVersion) for CopyPeer.
func encodeBufferExt(_ *msgpack.Encoder, v reflect.Value) ([]byte, error) {
	b := handleIn(v)
	if b.wire == notWire {
		return nil, ErrNoPeer
	}
	blk := b.blk.Load()
	if blk == nil {
		return nil, ErrDetached
	}
	if b.wire == wireInline {
		return append(append(make([]byte, 0, 1+len(blk.data)), copyVersion), blk.data...), nil
	}
	return appendRef(make([]byte, 0, refSize), blk.wireRef()), nil
}

// decodeBufferExt reads a Ref, or a copied Buffer's bytes, into an empty
// handle, for a Peer's Decode to resolve. It reads nothing it didn't
// check the size of first; the bytes of a copy are bounded by the message
// (which ValidateMessage checked).
func decodeBufferExt(dec *msgpack.Decoder, v reflect.Value, extLen int) error {
	if extLen < 1 {
		return fmt.Errorf("%w: empty payload", ErrBadRef)
	}
	var raw [refSize]byte
	if err := dec.ReadFull(raw[:1]); err != nil {
		return fmt.Errorf("%w: %w", ErrBadRef, err)
	}
	b := handleIn(v)
	if b.blk.Load() != nil || b.pending != nil || b.inline != nil {
		return fmt.Errorf("%w: decoding into a live Buffer", ErrBadRef)
	}
	if raw[0] == copyVersion {
		data := make([]byte, extLen-1)
		if err := dec.ReadFull(data); err != nil {
			return fmt.Errorf("%w: %w", ErrBadRef, err)
		}
		b.inline = data
		return nil
	}
	if extLen != refSize {
		return fmt.Errorf("%w: payload of %d bytes, want %d", ErrBadRef, extLen, refSize)
	}
	if err := dec.ReadFull(raw[1:]); err != nil {
		return fmt.Errorf("%w: %w", ErrBadRef, err)
	}
	ref, err := parseRef(raw[:])
	if err != nil {
		return err
	}
	b.pending = &ref
	return nil
}

// wireRef is the reference that names blk to a peer: its own span if it is
// arena memory, the owner's reference if it was adopted.
func (blk *block) wireRef() Ref {
	if blk.remote != nil {
		return blk.ref
	}
	return blk.localRef()
}
