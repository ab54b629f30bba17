//go:build darwin || freebsd || netbsd || openbsd || (linux && offload_portable)

package shmbuf

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// A portable segment is an unlinked regular file of the size asked for,
// whose mapping a peer shares; adoption refuses a size beyond the file.
func TestPortableSegment(t *testing.T) {
	fd, mem, err := createSegment(2 * pageSize)
	require.NoError(t, err)
	defer destroySegment(fd, mem)
	var st unix.Stat_t
	require.NoError(t, unix.Fstat(fd, &st))
	assert.Equal(t, uint32(unix.S_IFREG), uint32(st.Mode)&unix.S_IFMT)
	assert.Zero(t, st.Nlink, "the segment file must have no name left")
	assert.Equal(t, int64(2*pageSize), st.Size)

	dup := func() int {
		d, err := unix.Dup(fd)
		require.NoError(t, err)
		return d
	}
	_, err = mapPeerSegment(dup(), 2*pageSize+1)
	require.ErrorIs(t, err, ErrBadSegment)
	peer, err := mapPeerSegment(dup(), 2*pageSize)
	require.NoError(t, err)
	defer unmapPeerSegment(peer)
	mem[pageSize+7] = 42
	assert.Equal(t, byte(42), peer[pageSize+7], "the peer's mapping shares the memory")
}
