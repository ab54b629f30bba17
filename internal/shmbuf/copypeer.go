package shmbuf

import (
	"bytes"
	"fmt"
	"os"
	"reflect"

	"github.com/vmihailenco/msgpack/v5"
)

// CopyPeer is the Peer of a link without shared memory — a network, for
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
type CopyPeer struct{}

// Encode writes v with enc, copying the bytes of every Buffer in it. It
// checks v as Check does first, so a value that can't cross fails before
// anything is written; it never returns segments.
func (CopyPeer) Encode(enc *msgpack.Encoder, v any) ([]Segment, error) {
	rv, done, err := encodePlain(enc, v)
	if done {
		return nil, err
	}
	w := rewriter{replace: func(old, wire *Handle) error {
		blk := old.blk.Load()
		if blk == nil {
			return fmt.Errorf("%w: %w", ErrNotTransferable, ErrDetached)
		}
		wire.own(blk) // shares the memory for the encoding only
		wire.wire = wireInline
		return nil
	}}
	out, err := w.rewrite(rv)
	if err != nil {
		return nil, err
	}
	return nil, enc.Encode(out.Interface())
}

// Marshal is Encode into a fresh byte slice with a default encoder.
func (c CopyPeer) Marshal(v any) ([]byte, []Segment, error) {
	var buf bytes.Buffer
	if _, err := c.Encode(msgpack.NewEncoder(&buf), v); err != nil {
		return nil, nil, err
	}
	return buf.Bytes(), nil, nil
}

// Decode reads into v with dec and gives every copied Buffer in it its
// bytes. On error the Buffers it made are released again.
func (CopyPeer) Decode(dec *msgpack.Decoder, v any) error {
	err := dec.Decode(v)
	rv := reflect.ValueOf(v)
	if v == nil || !infoOf(rv.Type()).holds {
		return err
	}
	var made []*Handle
	_ = visit(rv, false, func(b *Handle) error {
		switch {
		case b.pending != nil:
			b.pending = nil
			err = firstErr(err, fmt.Errorf("%w: a shared-memory reference on a copying link", ErrBadRef))
		case b.inline != nil:
			b.own(&block{data: b.inline})
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
func (c CopyPeer) Unmarshal(data []byte, v any) error {
	if err := ValidateMessage(data); err != nil {
		return err
	}
	return c.Decode(NewDecoder(bytes.NewReader(data)), v)
}

// Adopt closes fd and fails: a copying link has no segments.
func (CopyPeer) Adopt(id SegmentID, fd int, _ int) error {
	os.NewFile(uintptr(fd), "").Close()
	return fmt.Errorf("%w: %v on a copying link", ErrBadSegment, id)
}

// ApplyReleases fails for any release: a copying link lends nothing.
func (CopyPeer) ApplyReleases(refs []Ref) error {
	if len(refs) > 0 {
		return fmt.Errorf("%w: %d releases on a copying link", ErrBadRef, len(refs))
	}
	return nil
}

func (CopyPeer) DrainReleases() []Ref { return nil }
func (CopyPeer) Stats() PeerStats     { return PeerStats{} }
func (CopyPeer) Close() error         { return nil }
