//go:build !offload_portable

package shmbuf

import (
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// unguardedSegment returns a descriptor of 4096 bytes that lacks what
// Linux's adoption demands of a segment: an unsealed memfd.
func unguardedSegment(t *testing.T) (string, int) {
	fd, err := unix.MemfdCreate("plain", unix.MFD_CLOEXEC)
	require.NoError(t, err)
	require.NoError(t, unix.Ftruncate(fd, 4096))
	return "an unsealed memfd", fd
}
