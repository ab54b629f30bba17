//go:build offload_portable

package shmbuf

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// unguardedSegment returns a descriptor of 4096 bytes that lacks what the
// portable adoption demands of a segment: a file that still has a name,
// which anyone with access to the directory could open and truncate.
// (An unsealed memfd passes there: the portable path cannot check seals.)
func unguardedSegment(t *testing.T) (string, int) {
	name := filepath.Join(t.TempDir(), "named")
	fd, err := unix.Open(name, unix.O_RDWR|unix.O_CREAT|unix.O_CLOEXEC, 0o600)
	require.NoError(t, err)
	require.NoError(t, unix.Ftruncate(fd, 4096))
	return "a named file", fd
}
