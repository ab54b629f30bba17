package testkit

// Counting fills b with bytes counting up from seed (wrapping at 256) and
// returns it: content a test can tell apart by its seed and check byte by
// byte after a move or a copy.
func Counting(b []byte, seed byte) []byte {
	for i := range b {
		b[i] = seed + byte(i)
	}
	return b
}
