package shmbuf

import (
	"io"

	"github.com/vmihailenco/msgpack/v5"
)

// NewDecoder returns a msgpack decoder reading r that is safe on hostile
// input where the stock one is not: msgpack v5.4.1, decoding a map into an
// interface, preallocates as many entries as the map's header claims, so a
// five-byte message can ask for gigabytes. This decoder grows such maps as
// entries actually arrive. Peer.Unmarshal uses it; code that decodes a
// peer's messages itself should too.
func NewDecoder(r io.Reader) *msgpack.Decoder {
	dec := msgpack.NewDecoder(r)
	dec.SetMapDecoder(decodeMapBounded)
	return dec
}

// mapPrealloc bounds the entries preallocated for a map from its header.
const mapPrealloc = 1024

func decodeMapBounded(d *msgpack.Decoder) (any, error) {
	n, err := d.DecodeMapLen()
	if err != nil || n == -1 {
		return nil, err
	}
	m := make(map[string]any, min(n, mapPrealloc))
	for range n {
		key, err := d.DecodeString()
		if err != nil {
			return nil, err
		}
		value, err := d.DecodeInterface()
		if err != nil {
			return nil, err
		}
		m[key] = value
	}
	return m, nil
}
