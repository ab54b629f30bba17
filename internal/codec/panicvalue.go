package codec

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/offloadgo/offload/internal/seam"
	"github.com/offloadgo/offload/internal/shmbuf"

	"github.com/vmihailenco/msgpack/v5"
)

// A task's panic in another process reaches its caller as a
// *pool.PanicError whose Value is as close to the panic value as a process
// boundary allows:
//
//   - a string is the string;
//   - an error is a *pool.RemoteError carrying its message (a
//     *seam.TaskError here, which the pool turns into one), so that
//     Unwrap still finds an error; errors.Is can't match the worker's own
//     error values, which are not the caller's;
//   - any other value msgpack encodes is what msgpack decodes into an
//     any: int64, uint64, float64, bool, []byte, []any, map[string]any —
//     or the value's own type, if it is registered with
//     msgpack.RegisterExt in both processes (the same binary);
//   - anything else is its fmt.Sprint text.
//
// In process, Value is the panic value itself.

// Tags of a panic body's value.
const (
	panicText  byte = iota // a string
	panicError             // an error's message
	panicValue             // msgpack
)

// EncodePanic encodes a panic: a tag, the uvarint length of the value's
// encoding, the encoding, then the stack.
func EncodePanic(value any, stack []byte) []byte {
	tag, enc := panicText, []byte(nil)
	switch v := value.(type) {
	case string:
		enc = []byte(v)
	case error:
		tag, enc = panicError, []byte(v.Error())
	default:
		var buf bytes.Buffer
		if err := MarshalInto(&buf, v); err == nil {
			tag, enc = panicValue, buf.Bytes()
		} else {
			enc = fmt.Append(nil, v)
		}
	}
	b := make([]byte, 0, 1+binary.MaxVarintLen64+len(enc)+len(stack))
	b = append(b, tag)
	b = binary.AppendUvarint(b, uint64(len(enc)))
	b = append(b, enc...)
	return append(b, stack...)
}

// DecodePanic reads an EncodePanic body; a malformed one gives the whole body as
// the value, so that nothing the worker said is lost.
func DecodePanic(body []byte) (value any, stack []byte) {
	if len(body) == 0 {
		return "", nil
	}
	n, k := binary.Uvarint(body[1:])
	if k <= 0 || uint64(len(body)-1-k) < n {
		return string(body), nil
	}
	enc, stack := body[1+k:1+k+int(n)], body[1+k+int(n):]
	switch body[0] {
	case panicText:
		return string(enc), stack
	case panicError:
		return &seam.TaskError{Message: string(enc)}, stack
	case panicValue:
		if v, err := decodeAny(enc); err == nil {
			return v, stack
		}
	}
	return string(body), nil
}

// decodeAny decodes one msgpack value into an any, integers as int64 or
// uint64, from bytes another process sent.
func decodeAny(data []byte) (v any, err error) {
	if err := shmbuf.ValidateMessage(data); err != nil {
		return nil, err
	}
	defer func() {
		if r := recover(); r != nil {
			err = errors.New("msgpack panicked")
		}
	}()
	dec := msgpack.NewDecoder(bytes.NewReader(data))
	dec.UseLooseInterfaceDecoding(true)
	err = dec.Decode(&v)
	return v, err
}
