package testkit

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// Counting fills b with bytes counting up from seed (wrapping at 256) and
// returns it: content a test can tell apart by its seed and check byte by
// byte after a move or a copy.
func Counting(b []byte, seed byte) []byte {
	for i := range b {
		b[i] = seed + byte(i)
	}
	return b
}

// CountingBuffer returns the buffer that newBuffer (a package's
// constructor: transfer.NewBuffer, shmbuf.NewBuffer) makes of n bytes,
// filled by Counting from seed. It fails tb if newBuffer fails.
func CountingBuffer[B interface{ Bytes() []byte }](tb testing.TB, newBuffer func(int) (B, error), n int, seed byte) B {
	tb.Helper()
	b, err := newBuffer(n)
	require.NoError(tb, err)
	Counting(b.Bytes(), seed)
	return b
}
