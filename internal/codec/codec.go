package codec

import (
	"bytes"
	"fmt"

	"github.com/offloadgo/offload/internal/shmbuf"

	"github.com/vmihailenco/msgpack/v5"
)

// The pool's msgpack codec, the same on both ends of a worker connection
// (the parent encodes inputs, the worker outputs). Encoding goes into a
// body sized by a sizeHints guess (see bodies.go); structs are
// array-encoded where arrayStructs allows it. Decoding accepts structs
// either way.

// newEncoder returns a pooled encoder writing to buf, set up for v: struct
// fields by position rather than by name when v's type allows it. Give it
// back with msgpack.PutEncoder.
func newEncoder(buf *bytes.Buffer, v any) *msgpack.Encoder {
	enc := msgpack.GetEncoder()
	enc.Reset(buf) // clears whatever flags the encoder's last user set
	enc.UseArrayEncodedStructs(arrayStructs(v))
	return enc
}

// MarshalInto appends v's msgpack to buf. msgpack reports most values it
// can't encode (channels, funcs) as errors; a panic from a type's own
// encoder, or from msgpack on a value it didn't expect, becomes one too.
func MarshalInto(buf *bytes.Buffer, v any) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("msgpack panicked: %v", r)
		}
	}()
	enc := newEncoder(buf, v)
	defer msgpack.PutEncoder(enc)
	return enc.Encode(v)
}

// PeerEncodeInto is MarshalInto with a Peer: the Buffers in v move.
func PeerEncodeInto(buf *bytes.Buffer, peer shmbuf.Peer, v any) (segs []shmbuf.Segment, err error) {
	defer func() {
		if r := recover(); r != nil {
			segs, err = nil, fmt.Errorf("msgpack panicked: %v", r)
		}
	}()
	enc := newEncoder(buf, v)
	defer msgpack.PutEncoder(enc)
	return peer.Encode(enc, v)
}

// Unmarshal decodes one msgpack value from data into out. The bytes come
// from another process, so they are validated first: msgpack preallocates
// the lengths that headers claim, which a corrupt message could make huge.
// A []byte out may be data's own bytes (see rawBytes): data must be a
// frame's body, not reused once decoded.
func Unmarshal(data []byte, out any) (err error) {
	if p, ok := out.(*[]byte); ok {
		if b, ok := rawBytes(data); ok {
			*p = b
			return nil
		}
	}
	if err := shmbuf.ValidateMessage(data); err != nil {
		return err
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("msgpack panicked: %v", r)
		}
	}()
	return msgpack.Unmarshal(data, out)
}

// PeerUnmarshal is Unmarshal with a Peer: references become Buffers. A
// nil peer is Unmarshal itself.
func PeerUnmarshal(peer shmbuf.Peer, data []byte, out any) (err error) {
	if peer == nil {
		return Unmarshal(data, out)
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("msgpack panicked: %v", r)
		}
	}()
	return peer.Unmarshal(data, out)
}
