package codec

import (
	"bytes"
	"fmt"
	"reflect"
	"sync"

	"github.com/offloadgo/offload/internal/shmbuf"

	"github.com/vmihailenco/msgpack/v5"
)

// The pool's msgpack codec, the same on both ends of a worker connection
// (the parent encodes inputs, the worker outputs). Encoding goes into a
// body sized by a sizeHints guess (see bodies.go); structs are
// array-encoded where arrayStructs allows it. Decoding accepts structs
// either way.

// facts is what the codec decides about a type once: whether its structs
// can be array-encoded (see arrayStructs), and whether its values can
// nest deeper than a receiver decodes (see mayNestTooDeep).
type facts struct{ array, deep bool }

// typeFacts caches factsOf by reflect.Type.
var typeFacts sync.Map // reflect.Type → facts

// factsOf returns the facts of v's type.
func factsOf(v any) facts {
	t := reflect.TypeOf(v)
	if t == nil {
		return facts{}
	}
	if f, ok := typeFacts.Load(t); ok {
		return f.(facts)
	}
	f := facts{array: !reachesInterface(t, map[reflect.Type]bool{}), deep: mayNestTooDeep(t)}
	typeFacts.Store(t, f)
	return f
}

// newEncoder returns a pooled encoder writing to buf: struct fields by
// position rather than by name if array is set. Give it back with
// msgpack.PutEncoder.
func newEncoder(buf *bytes.Buffer, array bool) *msgpack.Encoder {
	enc := msgpack.GetEncoder()
	enc.Reset(buf) // clears whatever flags the encoder's last user set
	enc.UseArrayEncodedStructs(array)
	return enc
}

// MarshalInto appends v's msgpack to buf. msgpack reports most values it
// can't encode (channels, funcs) as errors; a panic from a type's own
// encoder, or from msgpack on a value it didn't expect, becomes one too.
// A value nested deeper than a receiver decodes is ErrTooDeep.
func MarshalInto(buf *bytes.Buffer, v any) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("msgpack panicked: %v", r)
		}
	}()
	f := factsOf(v)
	enc := newEncoder(buf, f.array)
	defer msgpack.PutEncoder(enc)
	start := buf.Len()
	if err := enc.Encode(v); err != nil {
		return err
	}
	return checkDepth(f.deep, buf.Bytes()[start:])
}

// PeerEncodeInto is MarshalInto with a Peer: the Buffers in v move. Only
// ErrTooDeep comes after they have: a value nested too deep shows once
// encoded (as one over a size limit does).
func PeerEncodeInto(buf *bytes.Buffer, peer shmbuf.Peer, v any) (segs []shmbuf.Segment, err error) {
	defer func() {
		if r := recover(); r != nil {
			segs, err = nil, fmt.Errorf("msgpack panicked: %v", r)
		}
	}()
	f := factsOf(v)
	enc := newEncoder(buf, f.array)
	defer msgpack.PutEncoder(enc)
	start := buf.Len()
	if segs, err = peer.Encode(enc, v); err != nil {
		return nil, err
	}
	if err := checkDepth(f.deep, buf.Bytes()[start:]); err != nil {
		return nil, err
	}
	return segs, nil
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
