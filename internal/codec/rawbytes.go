package codec

import (
	"encoding/binary"

	"github.com/vmihailenco/msgpack/v5/msgpcode"
)

// A []byte input or output is the most common payload (JSON, an image, a
// file) and the largest. msgpack decodes one by allocating a slice and
// copying the bytes into it; but the frame body it comes from is read
// fresh for each call and each reply, and nothing else uses it once
// decoded, so the slice can be the frame's own bytes. For 1 MB that saves
// the worker (or, for an output, the caller) an allocation, its zeroing
// and a copy of the payload.

// rawBytes returns the bytes of data when data is exactly one msgpack bin
// value or nil, as the pool encodes a []byte: a slice of data itself,
// capped so that an append copies rather than runs into what follows.
// Anything else (a str, trailing bytes, a short header) reports !ok, for
// the general decoder to handle or reject.
func rawBytes(data []byte) (b []byte, ok bool) {
	if len(data) == 1 && data[0] == msgpcode.Nil {
		return nil, true
	}
	var head, n int
	switch {
	case len(data) >= 2 && data[0] == msgpcode.Bin8:
		head, n = 2, int(data[1])
	case len(data) >= 3 && data[0] == msgpcode.Bin16:
		head, n = 3, int(binary.BigEndian.Uint16(data[1:3]))
	case len(data) >= 5 && data[0] == msgpcode.Bin32:
		head, n = 5, int(binary.BigEndian.Uint32(data[1:5]))
	default:
		return nil, false
	}
	if len(data)-head != n {
		return nil, false
	}
	return data[head:len(data):len(data)], true
}
