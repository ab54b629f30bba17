package transfer

import (
	"encoding/binary"
	"fmt"
	"reflect"

	"github.com/offloadgo/offload/internal/xfer"

	"github.com/vmihailenco/msgpack/v5"
)

// extID is the msgpack extension type a *Buffer is encoded as. Other code
// sharing the msgpack registry must not register it.
const extID int8 = 42

// refVersion leads every encoded reference, so the layout can change.
const refVersion = 1

// refSize is the size of an encoded reference: version, arena, index,
// offset, length (big endian).
const refSize = 1 + 8 + 4 + 8 + 8

// appendRef encodes r.
func appendRef(dst []byte, r xfer.Ref) []byte {
	dst = append(dst, refVersion)
	dst = binary.BigEndian.AppendUint64(dst, r.Segment.Arena)
	dst = binary.BigEndian.AppendUint32(dst, r.Segment.Index)
	dst = binary.BigEndian.AppendUint64(dst, r.Offset)
	return binary.BigEndian.AppendUint64(dst, r.Length)
}

// parseRef decodes an encoded reference. It checks the layout only; whether
// the reference is in bounds is for Peer.Decode, which knows the segments.
func parseRef(b []byte) (xfer.Ref, error) {
	if len(b) != refSize {
		return xfer.Ref{}, fmt.Errorf("%w: payload of %d bytes, want %d", xfer.ErrBadRef, len(b), refSize)
	}
	if b[0] != refVersion {
		return xfer.Ref{}, fmt.Errorf("%w: version %d, want %d", xfer.ErrBadRef, b[0], refVersion)
	}
	return xfer.Ref{
		Segment: xfer.SegmentID{Arena: binary.BigEndian.Uint64(b[1:9]), Index: binary.BigEndian.Uint32(b[9:13])},
		Offset:  binary.BigEndian.Uint64(b[13:21]),
		Length:  binary.BigEndian.Uint64(b[21:29]),
	}, nil
}

// The extension is registered at init, like a codec registering itself: it
// only fills msgpack's type table and starts nothing.
func init() {
	msgpack.RegisterExtEncoder(extID, (*Buffer)(nil), encodeBufferExt)
	msgpack.RegisterExtDecoder(extID, (*Buffer)(nil), decodeBufferExt)
}

// encodeBufferExt writes a Buffer handle made by Peer.Encode as its Ref.
func encodeBufferExt(_ *msgpack.Encoder, v reflect.Value) ([]byte, error) {
	b := v.Interface().(*Buffer)
	if !b.wire {
		return nil, xfer.ErrNoPeer
	}
	blk := b.blk.Load()
	if blk == nil {
		return nil, ErrDetached
	}
	return appendRef(make([]byte, 0, refSize), blk.wireRef()), nil
}

// decodeBufferExt reads a Ref into an empty handle, for Peer.Decode to
// resolve. It reads nothing it didn't check the size of first.
func decodeBufferExt(dec *msgpack.Decoder, v reflect.Value, extLen int) error {
	if extLen != refSize {
		return fmt.Errorf("%w: payload of %d bytes, want %d", xfer.ErrBadRef, extLen, refSize)
	}
	var raw [refSize]byte
	if err := dec.ReadFull(raw[:]); err != nil {
		return fmt.Errorf("%w: %w", xfer.ErrBadRef, err)
	}
	ref, err := parseRef(raw[:])
	if err != nil {
		return err
	}
	b := v.Interface().(*Buffer)
	if b.blk.Load() != nil || b.pending != nil {
		return fmt.Errorf("%w: decoding into a live Buffer", xfer.ErrBadRef)
	}
	b.pending = &ref
	return nil
}

// wireRef is the reference that names blk to a peer: its own span if it is
// arena memory, the owner's reference if it was adopted.
func (blk *block) wireRef() xfer.Ref {
	if blk.remote != nil {
		return blk.ref
	}
	return blk.localRef()
}
