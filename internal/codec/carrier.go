package codec

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
)

// MaxCarrier bounds a trace context's carrier once encoded: room for W3C
// baggage at its largest (8192 bytes), a traceparent and a tracestate
// (512), and their keys. Both wires that carry one (a Subprocess call
// frame, a Remote call message) hold this much.
const MaxCarrier = 10 << 10

// ErrCarrierTooLarge is a carrier over MaxCarrier.
var ErrCarrierTooLarge = errors.New("trace context too large")

// AppendCarrier appends carrier to b: the uvarint count of its entries,
// then each key and value as a uvarint length and the bytes, keys in
// order so that one carrier has one encoding. An empty carrier is the
// single byte 0.
func AppendCarrier(b []byte, carrier map[string]string) []byte {
	b = binary.AppendUvarint(b, uint64(len(carrier)))
	keys := make([]string, 0, len(carrier))
	for k := range carrier {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		b = binary.AppendUvarint(b, uint64(len(k)))
		b = append(b, k...)
		b = binary.AppendUvarint(b, uint64(len(carrier[k])))
		b = append(b, carrier[k]...)
	}
	return b
}

// ParseCarrier reads a carrier AppendCarrier wrote, the whole of b. It
// refuses what AppendCarrier would not write: a count or a length past
// the end, bytes left over, a key twice or out of order.
func ParseCarrier(b []byte) (map[string]string, error) {
	if len(b) > MaxCarrier {
		return nil, fmt.Errorf("%w: %d bytes, over %d", ErrCarrierTooLarge, len(b), MaxCarrier)
	}
	n, k := Uvarint(b)
	// Each entry takes at least two bytes: this bounds the map's size by
	// the bytes that are really there.
	if k <= 0 || n > uint64(len(b)-k)/2 {
		return nil, errors.New("corrupt trace context: entry count")
	}
	b = b[k:]
	carrier := make(map[string]string, n)
	last := ""
	for i := range n {
		key, rest, ok := splitString(b)
		if !ok {
			return nil, fmt.Errorf("corrupt trace context: key %d", i)
		}
		value, rest, ok := splitString(rest)
		if !ok {
			return nil, fmt.Errorf("corrupt trace context: value of %q", key)
		}
		if i > 0 && key <= last {
			return nil, fmt.Errorf("corrupt trace context: key %q out of order", key)
		}
		carrier[key], last, b = value, key, rest
	}
	if len(b) != 0 {
		return nil, fmt.Errorf("corrupt trace context: %d bytes after its entries", len(b))
	}
	return carrier, nil
}

// splitString splits a uvarint-length-prefixed string off the front of b.
func splitString(b []byte) (s string, rest []byte, ok bool) {
	n, k := Uvarint(b)
	if k <= 0 || uint64(len(b)-k) < n {
		return "", nil, false
	}
	return string(b[k : k+int(n)]), b[k+int(n):], true
}

// ExtractCarrier returns ctx with the trace context of an encoded
// carrier, through extract (a Tracer's Extract, user code); ctx itself if
// extract is nil or encoded empty. A carrier that does not parse, or an
// extract that panics, is an error, so that it fails its own call rather
// than the worker process or node that runs it.
func ExtractCarrier(ctx context.Context, encoded []byte, extract func(context.Context, map[string]string) context.Context) (out context.Context, err error) {
	if extract == nil || len(encoded) == 0 {
		return ctx, nil
	}
	carrier, err := ParseCarrier(encoded)
	if err != nil {
		return nil, err
	}
	defer func() {
		if v := recover(); v != nil {
			out, err = nil, fmt.Errorf("trace context: the Tracer's Extract panicked: %v", v)
		}
	}()
	if out = extract(ctx, carrier); out == nil {
		return nil, errors.New("trace context: the Tracer's Extract returned a nil context")
	}
	return out, nil
}
