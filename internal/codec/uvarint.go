package codec

import "encoding/binary"

// Uvarint is binary.Uvarint refusing (k = 0) a value not in its shortest
// form, so that the wire formats built on it (the moves trailer,
// natsremote's messages) have one encoding per message.
func Uvarint(b []byte) (v uint64, k int) {
	v, k = binary.Uvarint(b)
	var short [binary.MaxVarintLen64]byte
	if k > 0 && k != binary.PutUvarint(short[:], v) {
		return 0, 0
	}
	return v, k
}
