package outcome

// Wire is one transport's table of the outcomes it carries, by the byte
// that names each on its wire. The bytes are each protocol's own; the
// table is the one place where they meet this vocabulary.
type Wire map[byte]Kind

// Byte is k's byte on w, or fallback for an outcome w does not carry.
func (w Wire) Byte(k Kind, fallback byte) byte {
	for b, kind := range w {
		if kind == k {
			return b
		}
	}
	return fallback
}

// Kind is the outcome b names on w; the zero Kind for a byte that names
// none.
func (w Wire) Kind(b byte) Kind { return w[b] }
