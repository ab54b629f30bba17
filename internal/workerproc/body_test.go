package workerproc

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestNewBodyIsItsOwnMemory: a body of any size has exactly the length
// asked for, and bodies allocated one after another do not share bytes.
func TestNewBodyIsItsOwnMemory(t *testing.T) {
	t.Parallel()
	for _, n := range []int{0, 1, largeBody - 1, largeBody, 3*largeBody + 5} {
		a, b := newBody(n), newBody(n)
		require.Len(t, a, n)
		require.Len(t, b, n)
		assert.Equal(t, n, cap(a), "an append must not run into memory past the body")
		copy(a, bytes.Repeat([]byte{1}, n))
		copy(b, bytes.Repeat([]byte{2}, n))
		assert.Equal(t, bytes.Repeat([]byte{1}, n), a, "size %d", n)
	}
}
