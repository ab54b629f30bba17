package transfer

import (
	"bytes"
	"fmt"
	"os"
	"reflect"

	"github.com/offloadgo/offload/internal/xfer"

	"github.com/vmihailenco/msgpack/v5"
)

// copyPeer is the Peer of a link without shared memory — a network, for
// package natsremote: a Buffer crosses by copy. Encode writes each
// Buffer's bytes inline (the Buffer extension, layout copyVersion) and
// leaves the handle as it is: the transport decides when the original
// goes (natsremote releases a call's input Buffers once it has sent
// them, as a move would have detached them). Decode makes every copied
// Buffer a new Buffer over heap memory of its own; a reference into
// shared memory means nothing here and fails with ErrBadRef.
//
// It keeps no books, so there is nothing to adopt, release or close: one
// value serves every link. Safe for concurrent use.
type copyPeer struct{}

// Encode writes v with enc, copying the bytes of every Buffer in it. It
// checks v as Check does first, so a value that can't cross fails before
// anything is written; it never returns segments.
func (copyPeer) Encode(enc *msgpack.Encoder, v any) ([]xfer.Segment, error) {
	rv, done, err := encodePlain(enc, v)
	if done {
		return nil, err
	}
	w := rewriter{replace: func(b *Buffer) (*Buffer, error) {
		blk := b.blk.Load()
		if blk == nil {
			return nil, fmt.Errorf("%w: %w", ErrNotTransferable, ErrDetached)
		}
		wire := newHandle(blk) // shares the memory for the encoding only
		wire.wire = wireInline
		return wire, nil
	}}
	out, err := w.rewrite(rv)
	if err != nil {
		return nil, err
	}
	return nil, enc.Encode(out.Interface())
}

// Marshal is Encode into a fresh byte slice with a default encoder.
func (c copyPeer) Marshal(v any) ([]byte, []xfer.Segment, error) {
	var buf bytes.Buffer
	if _, err := c.Encode(msgpack.NewEncoder(&buf), v); err != nil {
		return nil, nil, err
	}
	return buf.Bytes(), nil, nil
}

// Decode reads into v with dec and gives every copied Buffer in it its
// bytes. On error the Buffers it made are released again.
func (copyPeer) Decode(dec *msgpack.Decoder, v any) error {
	err := dec.Decode(v)
	rv := reflect.ValueOf(v)
	if v == nil || !infoOf(rv.Type()).holds {
		return err
	}
	var made []*Buffer
	_ = visit(rv, false, func(b *Buffer) error {
		switch {
		case b.pending != nil:
			b.pending = nil
			err = firstErr(err, fmt.Errorf("%w: a shared-memory reference on a copying link", xfer.ErrBadRef))
		case b.inline != nil:
			b.blk.Store(&block{data: b.inline})
			b.inline = nil
			made = append(made, b)
		}
		return nil
	})
	if err != nil {
		for _, b := range made {
			b.Release()
		}
		return err
	}
	return nil
}

// Unmarshal is Decode from data with NewDecoder, after ValidateMessage.
func (c copyPeer) Unmarshal(data []byte, v any) error {
	if err := validateMessage(data); err != nil {
		return err
	}
	return c.Decode(newDecoder(bytes.NewReader(data)), v)
}

// Adopt closes fd and fails: a copying link has no segments.
func (copyPeer) Adopt(id xfer.SegmentID, fd int, _ int) error {
	os.NewFile(uintptr(fd), "").Close()
	return fmt.Errorf("%w: %v on a copying link", xfer.ErrBadSegment, id)
}

// ApplyReleases fails for any release: a copying link lends nothing.
func (copyPeer) ApplyReleases(refs []xfer.Ref) error {
	if len(refs) > 0 {
		return fmt.Errorf("%w: %d releases on a copying link", xfer.ErrBadRef, len(refs))
	}
	return nil
}

func (copyPeer) DrainReleases() []xfer.Ref { return nil }
func (copyPeer) Stats() xfer.PeerStats     { return xfer.PeerStats{} }
func (copyPeer) Close() error              { return nil }
